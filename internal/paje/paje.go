// Package paje is the vocabulary of the Pajé trace format that mpiflow
// writes (export) and reads (importer): the events, their fields and the
// field types, and the header that defines events.
package paje

import "strings"

// Kind is the meaning of a Pajé event.
type Kind int

// The kinds of Pajé events.
const (
	DefineContainerType Kind = iota
	DefineStateType
	DefineEventType // event types: kept as types, otherwise ignored
	DefineVariableType
	DefineLinkType // link types: kept as types, otherwise ignored
	DefineEntityValue
	CreateContainer
	DestroyContainer
	SetState
	PushState
	PopState
	ResetState
	SetVariable
	AddVariable
	SubVariable
	TimedOther // events and links: time, type and container checked, otherwise ignored
)

// Field names, as written; readers match them without regard to case.
const (
	Time      = "Time"
	Alias     = "Alias"
	Type      = "Type"
	Container = "Container"
	Name      = "Name"
	Value     = "Value"
	Color     = "Color"
)

// Field is a field of an event definition.
type Field struct {
	Name, Type string
	// Required fields must be defined; the others (Alias in definitions,
	// as in PajeNG) may be left out.
	Required bool
}

// Event is an event of the Pajé format.
type Event struct {
	Name   string
	Kind   Kind
	Fields []Field // the fields mpiflow writes and reads, in the order written
}

// Required returns the names of e's required fields in lower case.
func (e Event) Required() []string {
	var r []string
	for _, f := range e.Fields {
		if f.Required {
			r = append(r, strings.ToLower(f.Name))
		}
	}
	return r
}

// Lookup returns the event of the Pajé format named name.
func Lookup(name string) (Event, bool) {
	fTime, fAlias, fType := Field{Time, "date", true}, Field{Alias, "string", false}, Field{Type, "string", true}
	fContainer, fName, fValue := Field{Container, "string", true}, Field{Name, "string", true}, Field{Value, "string", true}
	fColor, fDouble := Field{Color, "color", false}, Field{Value, "double", true}
	timed := []Field{fTime, fType, fContainer}
	k, fields := TimedOther, timed
	switch name {
	case "PajeDefineContainerType":
		k, fields = DefineContainerType, []Field{fAlias, fType, fName}
	case "PajeDefineStateType":
		k, fields = DefineStateType, []Field{fAlias, fType, fName}
	case "PajeDefineEventType":
		k, fields = DefineEventType, []Field{fAlias, fType, fName}
	case "PajeDefineVariableType":
		k, fields = DefineVariableType, []Field{fAlias, fType, fName}
	case "PajeDefineLinkType":
		k, fields = DefineLinkType, []Field{fAlias, fType, fName}
	case "PajeDefineEntityValue":
		k, fields = DefineEntityValue, []Field{fAlias, fType, fName, fColor}
	case "PajeCreateContainer":
		k, fields = CreateContainer, []Field{fTime, fAlias, fType, fContainer, fName}
	case "PajeDestroyContainer":
		k, fields = DestroyContainer, []Field{fTime, fType, fName}
	case "PajeSetState":
		k, fields = SetState, []Field{fTime, fType, fContainer, fValue}
	case "PajePushState":
		k, fields = PushState, []Field{fTime, fType, fContainer, fValue}
	case "PajePopState":
		k = PopState
	case "PajeResetState":
		k = ResetState
	case "PajeSetVariable":
		k, fields = SetVariable, append(timed, fDouble)
	case "PajeAddVariable":
		k, fields = AddVariable, append(timed, fDouble)
	case "PajeSubVariable":
		k, fields = SubVariable, append(timed, fDouble)
	case "PajeNewEvent", "PajeStartLink", "PajeEndLink":
	default:
		return Event{}, false
	}
	return Event{Name: name, Kind: k, Fields: fields}, true
}

// FieldTypes are the types a field may have, as a sentence lists them.
const FieldTypes = "date, double, float, int, hex, string or color"

// IsFieldType tells whether t is the type of a Pajé field.
func IsFieldType(t string) bool {
	switch t {
	case "date", "double", "float", "int", "hex", "string", "color":
		return true
	}
	return false
}

// Def is an event definition of a trace: the event and its id there.
type Def struct {
	ID   string
	Name string // the event's name (see Lookup)
}

// Header returns the %EventDef lines that define defs with all their
// fields. It panics on a name Lookup does not know.
func Header(defs []Def) string {
	var b strings.Builder
	for _, d := range defs {
		ev, ok := Lookup(d.Name)
		if !ok {
			panic("paje: unknown event " + d.Name)
		}
		b.WriteString("%EventDef " + ev.Name + " " + d.ID + "\n")
		for _, f := range ev.Fields {
			b.WriteString("%       " + f.Name + " " + f.Type + "\n")
		}
		b.WriteString("%EndEventDef\n")
	}
	return b.String()
}
