package importer

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"mpiflow/aggregate"
	"mpiflow/internal/paje"
)

// OptionError is an error of ReadPaje that an option fixes, such as a
// state type the trace lacks; it lists the choices the trace offers.
type OptionError struct {
	Option string // the PajeOptions field that fixes it
	Msg    string
}

func (e *OptionError) Error() string { return e.Msg + " (" + e.Option + ")" }

// list lists names for an error, each once.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	seen := map[string]bool{}
	var l []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			l = append(l, n)
		}
	}
	return strings.Join(l, ", ")
}

// variable is the value of a variable of a container: piecewise
// constant, changed by PajeSetVariable, PajeAddVariable and
// PajeSubVariable as in PajeNG.
type variable struct {
	set   bool // a value was set: before that the variable has none
	value float64
	since int64 // time of the last change
	evs   []aggregate.ValueEvent
}

// changeVariable sets, adds to or subtracts from a variable at t.
func (p *pajeParser) changeVariable(d *pajeDef, vals []string, t int64) error {
	if err := p.timedOther(d, vals); err != nil {
		return err
	}
	ti, _ := p.lookupType(p.field(d, vals, pfType))
	c, _ := p.lookupCont(p.field(d, vals, pfContainer))
	if p.typeL[ti].kind != paje.DefineVariableType {
		return fmt.Errorf("type %q is not a variable type", p.field(d, vals, pfType))
	}
	if c < 0 {
		return errors.New("variables of the root container are not supported (mpiflow imports the variables of created containers)")
	}
	s := p.field(d, vals, pfValue)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("malformed value %q", s)
	}
	k := stateKey{c, ti}
	x := p.vars[k]
	if x == nil {
		if p.vars == nil {
			p.vars = map[stateKey]*variable{}
		}
		x = &variable{since: t}
		p.vars[k] = x
		p.varOrder = append(p.varOrder, k)
	}
	if d.kind != paje.SetVariable && !x.set {
		return fmt.Errorf("%s on container %q: the variable has no value yet", d.name, p.field(d, vals, pfContainer))
	}
	x.close(c, ti, t)
	switch d.kind {
	case paje.SetVariable:
		x.value = v
	case paje.AddVariable:
		x.value += v
	case paje.SubVariable:
		x.value -= v
	}
	if math.IsInf(x.value, 0) {
		return fmt.Errorf("%s on container %q: the value overflows", d.name, p.field(d, vals, pfContainer))
	}
	x.set = true
	return nil
}

// close ends the piece of the current value at t.
func (x *variable) close(c, ti int, t int64) {
	if x.set && t > x.since {
		x.evs = append(x.evs, aggregate.ValueEvent{Resource: c, Variable: ti, Start: x.since, End: t, Value: x.value})
	}
	x.since = t
}

// destroyVars ends the variables of container c at t.
func (p *pajeParser) destroyVars(c int, t int64) {
	for ti := range p.typeL {
		if x := p.vars[stateKey{c, ti}]; x != nil {
			x.close(c, ti, t)
			x.set = false
		}
	}
}

// typesWith lists the names of the types of kind whose values were used
// (states or pieces), in order of definition.
func (p *pajeParser) typesWith(kind paje.Kind) []string {
	used := map[int]bool{}
	for _, k := range p.order {
		used[k.typ] = used[k.typ] || len(p.stacks[k].evs) > 0
	}
	for _, k := range p.varOrder {
		used[k.typ] = used[k.typ] || len(p.vars[k].evs) > 0
	}
	var names []string
	for ti, t := range p.typeL {
		if t.kind == kind && used[ti] {
			names = append(names, t.name)
		}
	}
	return names
}

// noStates is the error of a trace without states of the types opt asks
// for, naming the option that fixes it.
func (p *pajeParser) noStates(opt PajeOptions) error {
	states, vars := p.typesWith(paje.DefineStateType), p.typesWith(paje.DefineVariableType)
	switch {
	case opt.StateType != "" && len(states) > 0:
		return &OptionError{Option: "StateType", Msg: fmt.Sprintf("state type %q has no states; the state types with states: %s", opt.StateType, list(states))}
	case len(vars) > 0:
		return &OptionError{Option: "VariableType", Msg: "the trace has no states; its variables: " + list(vars)}
	case len(p.varOrder) > 0:
		return errors.New("the trace has no states, and its variables keep their values for no time: nothing to integrate")
	}
	return errors.New("the trace has no states and no variables")
}

// finishVars closes the variables still open at the trace's last time and
// makes the trace one of variables: a resource per container with
// variables, the variable types as its states.
func (p *pajeParser) finishVars(opt PajeOptions) error {
	for _, k := range p.varOrder {
		p.vars[k].close(k.cont, k.typ, p.last)
	}
	vars := p.typesWith(paje.DefineVariableType)
	if len(vars) == 0 {
		if states := p.typesWith(paje.DefineStateType); len(states) > 0 {
			return &OptionError{Option: "StateType", Msg: "the trace has no variables; its state types: " + list(states)}
		}
		return errors.New("the trace has no states and no variables")
	}
	// Variable types of one name are one variable: SimGrid defines its
	// power and bandwidth again in the host and link types of each zone.
	index := map[int]int{} // type -> its variable in the trace
	byName := map[string]int{}
	for ti, t := range p.typeL {
		if id, ok := p.types[opt.VariableType]; t.kind != paje.DefineVariableType || !p.hasPieces(ti) ||
			(opt.VariableType != "" && t.name != opt.VariableType && (!ok || id != ti)) {
			continue
		}
		x, ok := byName[t.name]
		if !ok {
			x = len(p.tr.StateNames)
			byName[t.name] = x
			p.tr.StateNames = append(p.tr.StateNames, t.name)
		}
		index[ti] = x
	}
	if len(index) == 0 {
		return &OptionError{Option: "VariableType", Msg: fmt.Sprintf("no variable type %q with values; the variables: %s", opt.VariableType, list(vars))}
	}
	p.varResources(index)
	SetRanks(&p.tr)
	return nil
}

// hasPieces tells whether variable type ti has a piece in some container.
func (p *pajeParser) hasPieces(ti int) bool {
	for _, k := range p.varOrder {
		if k.typ == ti && len(p.vars[k].evs) > 0 {
			return true
		}
	}
	return false
}

// varResources adds a resource per container with pieces of the types in
// index, in container creation order, with its pieces.
func (p *pajeParser) varResources(index map[int]int) {
	first := true
	for c := range p.tr.Containers {
		var evs []aggregate.ValueEvent
		for ti := range p.typeL {
			x, ok := p.vars[stateKey{c, ti}]
			if _, want := index[ti]; !ok || !want {
				continue
			}
			for _, ev := range x.evs {
				ev.Resource, ev.Variable = len(p.tr.Res), index[ti]
				evs = append(evs, ev)
				if first || ev.Start < p.tr.Start {
					p.tr.Start = ev.Start
				}
				if first || ev.End > p.tr.End {
					p.tr.End = ev.End
				}
				first = false
			}
		}
		if len(evs) == 0 {
			continue
		}
		p.tr.Containers[c].Resource = len(p.tr.Res)
		p.tr.Res = append(p.tr.Res, aggregate.Resource{Name: p.tr.Containers[c].Name})
		p.tr.Values = append(p.tr.Values, evs)
	}
}

// Source returns t as the aggregator reads it: t itself for states, an
// aggregate.Values over its containers for variables.
func (t *Trace) Source() aggregate.Source {
	if t.Values == nil {
		return t
	}
	return &aggregate.Values{Res: t.Res, Variables: t.StateNames, Start: t.Start, End: t.End, Events: t.Values, Spec: t.DefaultSpec()}
}
