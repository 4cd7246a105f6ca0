package paje

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kind     Kind
		required []string
	}{
		{"PajeDefineContainerType", DefineContainerType, []string{"type", "name"}},
		{"PajeDefineStateType", DefineStateType, []string{"type", "name"}},
		{"PajeDefineEventType", DefineEventType, []string{"type", "name"}},
		{"PajeDefineVariableType", DefineVariableType, []string{"type", "name"}},
		{"PajeDefineLinkType", DefineLinkType, []string{"type", "name"}},
		{"PajeDefineEntityValue", DefineEntityValue, []string{"type", "name"}},
		{"PajeCreateContainer", CreateContainer, []string{"time", "type", "container", "name"}},
		{"PajeDestroyContainer", DestroyContainer, []string{"time", "type", "name"}},
		{"PajeSetState", SetState, []string{"time", "type", "container", "value"}},
		{"PajePushState", PushState, []string{"time", "type", "container", "value"}},
		{"PajePopState", PopState, []string{"time", "type", "container"}},
		{"PajeResetState", ResetState, []string{"time", "type", "container"}},
		{"PajeNewEvent", TimedOther, []string{"time", "type", "container"}},
		{"PajeSetVariable", SetVariable, []string{"time", "type", "container", "value"}},
		{"PajeAddVariable", AddVariable, []string{"time", "type", "container", "value"}},
		{"PajeSubVariable", SubVariable, []string{"time", "type", "container", "value"}},
		{"PajeStartLink", TimedOther, []string{"time", "type", "container"}},
		{"PajeEndLink", TimedOther, []string{"time", "type", "container"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := Lookup(tc.name)
			require.True(t, ok)
			assert.Equal(t, tc.name, ev.Name)
			assert.Equal(t, tc.kind, ev.Kind)
			assert.Equal(t, tc.required, ev.Required())
			for _, f := range ev.Fields {
				assert.True(t, IsFieldType(f.Type), f.Name)
			}
		})
	}
	_, ok := Lookup("PajeNoSuchEvent")
	assert.False(t, ok)
}

func TestIsFieldType(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want bool
	}{{"date", true}, {"double", true}, {"float", true}, {"int", true}, {"hex", true}, {"string", true}, {"color", true}, {"text", false}, {"", false}} {
		assert.Equal(t, tc.want, IsFieldType(tc.typ), tc.typ)
	}
}

func TestHeader(t *testing.T) {
	got := Header([]Def{{ID: "0", Name: "PajeDefineEntityValue"}, {ID: "7", Name: "PajeSetState"}})
	assert.Equal(t, `%EventDef PajeDefineEntityValue 0
%       Alias string
%       Type string
%       Name string
%       Color color
%EndEventDef
%EventDef PajeSetState 7
%       Time date
%       Type string
%       Container string
%       Value string
%EndEventDef
`, got)
	assert.Panics(t, func() { Header([]Def{{ID: "0", Name: "PajeNoSuchEvent"}}) })
}
