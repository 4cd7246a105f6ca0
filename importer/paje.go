package importer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"mpiflow/aggregate"
	"mpiflow/internal/inputfile"
	"mpiflow/internal/paje"
)

// PajeOptions tune ReadPaje.
type PajeOptions struct {
	// StateType selects the state type (alias or name) whose states are
	// imported. Empty: all of them; a container with states of several
	// types then has a resource per type (named by the type, below it),
	// and a value name that several types use is named "type: value".
	StateType string
	// Variables imports the variables instead of the states, which a
	// trace without states gets anyway; VariableType selects one
	// variable type (alias or name) and implies Variables.
	Variables    bool
	VariableType string
}

// pajeOldFields maps the field names of the older Pajé header style
// (accepted by pj_dump --no-strict) to the names the parser reads.
var pajeOldFields = map[string]string{"containertype": "type", "entitytype": "type"}

type pajeDef struct {
	name   string
	kind   paje.Kind
	line   int
	fields []string       // field names in order
	pos    map[string]int // lower-case field name -> position
	// at holds the positions of the fields the parser reads (-1 when
	// absent), so event lines need no map lookups.
	at [numPajeFields]int
}

// The fields the parser reads, indexing pajeDef.at.
const (
	pfTime = iota
	pfAlias
	pfType
	pfContainer
	pfName
	pfValue
	numPajeFields
)

// pajeFieldNames are the names of the fields the parser reads, in lower
// case as definitions are indexed.
var pajeFieldNames = [numPajeFields]string{
	strings.ToLower(paje.Time), strings.ToLower(paje.Alias), strings.ToLower(paje.Type),
	strings.ToLower(paje.Container), strings.ToLower(paje.Name), strings.ToLower(paje.Value),
}

type pajeType struct {
	name   string
	kind   paje.Kind // its definition event
	parent int       // index of the container type it belongs to, -1 for the root type
	// values maps a value's identifier (its alias, or its name when it
	// has none, as in PajeNG) to an index into names; byName maps a name
	// to its index, so values shown alike are one state.
	values map[string]int
	byName map[string]int
	names  []string
}

func (t *pajeType) isCont() bool  { return t.kind == paje.DefineContainerType }
func (t *pajeType) isState() bool { return t.kind == paje.DefineStateType }

// stateKey is a (container, state type) pair: each has its own stack.
type stateKey struct{ cont, typ int }

type stateStack struct {
	stack []int // value indices of the type, innermost last
	since int64 // time of the last change
	evs   []aggregate.StateEvent
}

type pajeParser struct {
	path   string
	line   int
	defs   map[string]*pajeDef // by id
	curDef *pajeDef
	// Types and containers are looked up by identifier, their alias or
	// their name when they have no alias, as in PajeNG; names are for
	// display only.
	types     map[string]int // identifier -> index into typeL
	typeL     []*pajeType
	conts     map[string]int // identifier -> index into Trace.Containers
	rootAlive bool
	rootKids  []int
	alive     []bool
	contTyp   []int
	kids      [][]int
	stacks    map[stateKey]*stateStack
	order     []stateKey // stacks in creation order
	vars      map[stateKey]*variable
	varOrder  []stateKey // vars in creation order
	last      int64      // latest time seen
	tr        Trace
}

// ReadPaje reads a Pajé trace file.
func ReadPaje(path string, opt PajeOptions) (*Trace, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	return ParsePaje(f, path, opt)
}

// ParsePaje reads a Pajé trace from r; name is used in errors, which give
// the line number of unknown or malformed lines.
func ParsePaje(r io.Reader, name string, opt PajeOptions) (*Trace, error) {
	p := &pajeParser{
		path:      name,
		defs:      map[string]*pajeDef{},
		types:     map[string]int{"0": -1},
		conts:     map[string]int{"0": -1},
		stacks:    map[stateKey]*stateStack{},
		rootAlive: true,
	}
	p.tr.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var toks []string
	for sc.Scan() {
		p.line++
		var err error
		toks, err = p.do(sc.Text(), toks[:0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, p.line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, p.line+1, err)
	}
	if p.curDef != nil {
		return nil, fmt.Errorf("%s:%d: %%EventDef %s is not closed by %%EndEventDef", name, p.curDef.line, p.curDef.name)
	}
	if err := p.finish(opt); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &p.tr, nil
}

// do handles one line; toks is scratch space, returned for reuse.
func (p *pajeParser) do(line string, toks []string) ([]string, error) {
	s := strings.TrimSpace(line)
	if s == "" || s[0] == '#' {
		return toks, nil
	}
	if s[0] == '%' {
		return toks, p.header(s)
	}
	if p.curDef != nil {
		return toks, fmt.Errorf("event line inside %%EventDef %s", p.curDef.name)
	}
	toks, err := tokenize(s, toks)
	if err != nil {
		return toks, err
	}
	def := p.defs[toks[0]]
	if def == nil {
		return toks, fmt.Errorf("unknown event id %q (no %%EventDef for it)", toks[0])
	}
	if len(toks)-1 != len(def.fields) {
		return toks, fmt.Errorf("%s (id %s) has %d fields, the line has %d", def.name, toks[0], len(def.fields), len(toks)-1)
	}
	return toks, p.event(def, toks[1:])
}

func (p *pajeParser) header(s string) error {
	f := strings.Fields(s[1:])
	switch {
	case len(f) == 0:
		return nil // a bare "%" line
	case f[0] == "EventDef":
		if p.curDef != nil {
			return fmt.Errorf("%%EventDef inside %%EventDef %s", p.curDef.name)
		}
		if len(f) != 3 {
			return errors.New("malformed %EventDef: want \"%EventDef NAME ID\"")
		}
		ev, ok := paje.Lookup(f[1])
		if !ok {
			return fmt.Errorf("unknown event %q in %%EventDef", f[1])
		}
		if _, dup := p.defs[f[2]]; dup {
			return fmt.Errorf("event id %s defined twice", f[2])
		}
		p.curDef = &pajeDef{name: f[1], kind: ev.Kind, line: p.line, pos: map[string]int{}}
		p.defs[f[2]] = p.curDef
	case f[0] == "EndEventDef":
		d := p.curDef
		if d == nil {
			return errors.New("%EndEventDef without %EventDef")
		}
		ev, _ := paje.Lookup(d.name)
		for _, req := range ev.Required() {
			if _, ok := d.pos[req]; !ok {
				return fmt.Errorf("%%EventDef %s (line %d) lacks the field %s", d.name, d.line, req)
			}
		}
		for k, name := range pajeFieldNames {
			d.at[k] = -1
			if i, ok := d.pos[name]; ok {
				d.at[k] = i
			}
		}
		p.curDef = nil
	default:
		if p.curDef == nil {
			return fmt.Errorf("unknown header line %q", s)
		}
		if len(f) != 2 || !paje.IsFieldType(f[1]) {
			return fmt.Errorf("malformed field of %%EventDef %s: want \"%% NAME TYPE\" with TYPE %s", p.curDef.name, paje.FieldTypes)
		}
		name := strings.ToLower(f[0])
		if n, ok := pajeOldFields[name]; ok {
			name = n
		}
		if _, dup := p.curDef.pos[name]; dup {
			return fmt.Errorf("field %s twice in %%EventDef %s", f[0], p.curDef.name)
		}
		p.curDef.pos[name] = len(p.curDef.fields)
		p.curDef.fields = append(p.curDef.fields, f[0])
	}
	return nil
}

// tokenize splits a line into blank-separated fields; double quotes group
// a field with blanks (Pajé has no escapes).
func tokenize(s string, toks []string) ([]string, error) {
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			return toks, nil
		}
		if s[i] == '"' {
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return toks, errors.New("unterminated quoted string")
			}
			toks = append(toks, s[i+1:i+1+end])
			i += end + 2
			if i < len(s) && s[i] != ' ' && s[i] != '\t' {
				return toks, errors.New("no blank after a quoted string")
			}
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		toks = append(toks, s[i:j])
		i = j
	}
}

func (p *pajeParser) field(d *pajeDef, vals []string, k int) string {
	if i := d.at[k]; i >= 0 {
		return vals[i]
	}
	return ""
}

func (p *pajeParser) lookupType(id string) (int, error) {
	t, ok := p.types[id]
	if !ok {
		return 0, fmt.Errorf("unknown type %q", id)
	}
	return t, nil
}

func (p *pajeParser) lookupCont(id string) (int, error) {
	c, ok := p.conts[id]
	if !ok {
		return 0, fmt.Errorf("unknown container %q", id)
	}
	if (c >= 0 && !p.alive[c]) || (c < 0 && !p.rootAlive) {
		return 0, fmt.Errorf("container %q was destroyed", id)
	}
	return c, nil
}

// identifier is what a definition or container is looked up by: its
// alias, or its name when it has none.
func (p *pajeParser) identifier(d *pajeDef, vals []string) string {
	if a := p.field(d, vals, pfAlias); a != "" {
		return a
	}
	return p.field(d, vals, pfName)
}

// typeName names type ti in errors.
func (p *pajeParser) typeName(ti int) string {
	if ti < 0 {
		return "0"
	}
	return p.typeL[ti].name
}

// contType is the type of container c, -1 for the root.
func (p *pajeParser) contType(c int) int {
	if c < 0 {
		return -1
	}
	return p.contTyp[c]
}

func (p *pajeParser) event(d *pajeDef, vals []string) error {
	var t int64
	if d.at[pfTime] >= 0 {
		var err error
		if t, err = parseTime(p.field(d, vals, pfTime)); err != nil {
			return err
		}
		if t < p.last {
			return fmt.Errorf("time %s goes back (a previous line has %s s); Pajé needs times in order",
				p.field(d, vals, pfTime), strconv.FormatFloat(float64(p.last)/1e9, 'f', -1, 64))
		}
		p.last = t
	}
	switch d.kind {
	case paje.DefineContainerType, paje.DefineStateType, paje.DefineEventType, paje.DefineVariableType, paje.DefineLinkType:
		return p.defineType(d, vals)
	case paje.DefineEntityValue:
		return p.defineValue(d, vals)
	case paje.CreateContainer:
		return p.createContainer(d, vals)
	case paje.DestroyContainer:
		return p.destroyContainer(d, vals, t)
	case paje.TimedOther:
		return p.timedOther(d, vals)
	case paje.SetState, paje.PushState, paje.PopState, paje.ResetState:
		return p.changeState(d, vals, t)
	case paje.SetVariable, paje.AddVariable, paje.SubVariable:
		return p.changeVariable(d, vals, t)
	}
	return nil
}

// defineType defines a type.
func (p *pajeParser) defineType(d *pajeDef, vals []string) error {
	parent, err := p.lookupType(p.field(d, vals, pfType))
	if err != nil {
		return err
	}
	if parent >= 0 && !p.typeL[parent].isCont() {
		return fmt.Errorf("type %q is not a container type", p.field(d, vals, pfType))
	}
	name := p.field(d, vals, pfName)
	if name == "0" {
		return errors.New("the type name \"0\" is reserved for the root")
	}
	id := p.identifier(d, vals)
	if _, dup := p.types[id]; dup {
		return fmt.Errorf("type %q already defined", id)
	}
	pt := &pajeType{name: name, kind: d.kind, parent: parent, values: map[string]int{}, byName: map[string]int{}}
	p.typeL = append(p.typeL, pt)
	p.types[id] = len(p.typeL) - 1
	return nil
}

// defineValue defines a value of a type.
func (p *pajeParser) defineValue(d *pajeDef, vals []string) error {
	ti, err := p.lookupType(p.field(d, vals, pfType))
	if err != nil {
		return err
	}
	if ti < 0 || p.typeL[ti].isCont() || p.typeL[ti].kind == paje.DefineVariableType {
		return fmt.Errorf("type %q is a container or variable type, which has no values", p.field(d, vals, pfType))
	}
	pt := p.typeL[ti]
	id := p.identifier(d, vals)
	if _, dup := pt.values[id]; dup {
		return fmt.Errorf("value %q of type %q already defined", id, p.field(d, vals, pfType))
	}
	pt.values[id] = pt.index(p.field(d, vals, pfName))
	return nil
}

// createContainer creates a container.
func (p *pajeParser) createContainer(d *pajeDef, vals []string) error {
	ti, err := p.lookupType(p.field(d, vals, pfType))
	if err != nil {
		return err
	}
	if ti < 0 || !p.typeL[ti].isCont() {
		return fmt.Errorf("type %q is not a container type", p.field(d, vals, pfType))
	}
	parent, err := p.lookupCont(p.field(d, vals, pfContainer))
	if err != nil {
		return err
	}
	if pt := p.contType(parent); p.typeL[ti].parent != pt {
		return fmt.Errorf("container type %q is not a child of type %q, the type of container %q",
			p.typeL[ti].name, p.typeName(pt), p.field(d, vals, pfContainer))
	}
	id := p.identifier(d, vals)
	if _, dup := p.conts[id]; dup {
		return fmt.Errorf("container %q already exists", id)
	}
	name := p.field(d, vals, pfName)
	p.tr.Containers = append(p.tr.Containers, Container{Name: name, Parent: parent, Resource: -1})
	c := len(p.tr.Containers) - 1
	p.alive = append(p.alive, true)
	p.contTyp = append(p.contTyp, ti)
	p.kids = append(p.kids, nil)
	if parent >= 0 {
		p.kids[parent] = append(p.kids[parent], c)
	} else {
		p.rootKids = append(p.rootKids, c)
	}
	p.conts[id] = c
	return nil
}

// destroyContainer destroys a container (and those below it) at t.
func (p *pajeParser) destroyContainer(d *pajeDef, vals []string, t int64) error {
	ti, err := p.lookupType(p.field(d, vals, pfType))
	if err != nil {
		return err
	}
	c, err := p.lookupCont(p.field(d, vals, pfName))
	if err != nil {
		return err
	}
	if ct := p.contType(c); ct != ti {
		return fmt.Errorf("container %q has type %q, not %q", p.field(d, vals, pfName), p.typeName(ct), p.field(d, vals, pfType))
	}
	if c >= 0 {
		p.destroy(c, t)
		return nil
	}
	// Destroying the root ends the trace's containers, as at the
	// end of a trace in PajeNG.
	p.rootAlive = false
	for _, k := range p.rootKids {
		p.destroy(k, t)
	}
	return nil
}

// timedOther checks the type and container of an event, a variable or a
// link event.
func (p *pajeParser) timedOther(d *pajeDef, vals []string) error {
	ti, err := p.lookupType(p.field(d, vals, pfType))
	if err != nil {
		return err
	}
	c, err := p.lookupCont(p.field(d, vals, pfContainer))
	if err != nil {
		return err
	}
	if ct := p.contType(c); ti < 0 || p.typeL[ti].parent != ct {
		return fmt.Errorf("type %q is not a child of type %q, the type of container %q",
			p.field(d, vals, pfType), p.typeName(ct), p.field(d, vals, pfContainer))
	}
	return nil
}

// changeState changes the state of a container at t.
func (p *pajeParser) changeState(d *pajeDef, vals []string, t int64) error {
	ti, err := p.stateType(p.field(d, vals, pfType))
	if err != nil {
		return err
	}
	c, err := p.lookupCont(p.field(d, vals, pfContainer))
	if err != nil {
		return err
	}
	if ct := p.contType(c); p.typeL[ti].parent != ct {
		return fmt.Errorf("state type %q is not a child of type %q, the type of container %q",
			p.typeL[ti].name, p.typeName(ct), p.field(d, vals, pfContainer))
	}
	if c < 0 {
		return errors.New("states of the root container are not supported (mpiflow imports the states of created containers)")
	}
	st := p.stack(c, ti, t)
	switch d.kind {
	case paje.SetState:
		st.stack = append(st.stack[:0], p.value(ti, p.field(d, vals, pfValue)))
	case paje.PushState:
		st.stack = append(st.stack, p.value(ti, p.field(d, vals, pfValue)))
	case paje.PopState:
		if len(st.stack) == 0 {
			return fmt.Errorf("PajePopState on container %q with no state pushed", p.field(d, vals, pfContainer))
		}
		st.stack = st.stack[:len(st.stack)-1]
	case paje.ResetState:
		st.stack = st.stack[:0]
	}
	return nil
}

func (p *pajeParser) stateType(id string) (int, error) {
	ti, err := p.lookupType(id)
	if err != nil {
		return 0, err
	}
	if ti < 0 || !p.typeL[ti].isState() {
		return 0, fmt.Errorf("type %q is not a state type", id)
	}
	return ti, nil
}

// index returns the index of the value named name, added if new.
func (t *pajeType) index(name string) int {
	if v, ok := t.byName[name]; ok {
		return v
	}
	t.names = append(t.names, name)
	t.byName[name] = len(t.names) - 1
	return len(t.names) - 1
}

// value returns the index of a state value by identifier; a value that
// was never defined is added with the identifier as its name, as PajeNG
// does.
func (p *pajeParser) value(ti int, id string) int {
	pt := p.typeL[ti]
	if v, ok := pt.values[id]; ok {
		return v
	}
	v := pt.index(id)
	pt.values[id] = v
	return v
}

// stack returns the state stack of container c and type ti after closing
// its current interval at t.
func (p *pajeParser) stack(c, ti int, t int64) *stateStack {
	k := stateKey{c, ti}
	st := p.stacks[k]
	if st == nil {
		st = &stateStack{since: t}
		p.stacks[k] = st
		p.order = append(p.order, k)
		return st
	}
	st.close(c, t)
	return st
}

// close ends the interval of the innermost state at t.
func (st *stateStack) close(c int, t int64) {
	if n := len(st.stack); n > 0 && t > st.since {
		st.evs = append(st.evs, aggregate.StateEvent{Resource: c, State: st.stack[n-1], Start: st.since, End: t})
	}
	st.since = t
}

// destroy ends the states of c and of the containers below it.
func (p *pajeParser) destroy(c int, t int64) {
	if !p.alive[c] {
		return
	}
	p.alive[c] = false
	for ti := range p.typeL {
		if st := p.stacks[stateKey{c, ti}]; st != nil {
			st.close(c, t)
			st.stack = st.stack[:0]
		}
	}
	p.destroyVars(c, t)
	for _, k := range p.kids[c] {
		p.destroy(k, t)
	}
}

// finish closes the states still open at the trace's last time, picks the
// state types, or the variables (see finishVars) when asked or when the
// trace has no states, and builds the resources.
func (p *pajeParser) finish(opt PajeOptions) error {
	for _, k := range p.order {
		st := p.stacks[k]
		st.close(k.cont, p.last)
	}
	if opt.Variables || opt.VariableType != "" {
		return p.finishVars(opt)
	}
	types, err := p.stateTypes(opt)
	if err != nil {
		return err
	}
	if len(types) == 0 {
		if opt.StateType == "" && len(p.typesWith(paje.DefineVariableType)) > 0 {
			return p.finishVars(opt)
		}
		return p.noStates(opt)
	}
	p.resources(types, p.stateNames(types))
	SetRanks(&p.tr)
	return nil
}

// stateTypes returns the state types imported, in order of definition:
// those with states, and of them the one opt names if it does.
func (p *pajeParser) stateTypes(opt PajeOptions) ([]int, error) {
	used := map[int]bool{}
	for _, k := range p.order {
		if len(p.stacks[k].evs) > 0 {
			used[k.typ] = true
		}
	}
	var types []int // the state types imported, in order of definition
	if opt.StateType != "" {
		ti, err := p.stateType(opt.StateType)
		if err != nil {
			// Not an identifier: the option may name the type.
			for i, t := range p.typeL {
				if t.isState() && t.name == opt.StateType {
					ti, err = i, nil
				}
			}
			if err != nil && len(p.typesWith(paje.DefineStateType)) == 0 {
				return nil, p.noStates(PajeOptions{})
			}
			if err != nil {
				return nil, &OptionError{Option: "StateType", Msg: fmt.Sprintf("%v; the state types: %s", err, list(p.typesWith(paje.DefineStateType)))}
			}
		}
		if used[ti] {
			types = []int{ti}
		}
	} else {
		for ti := range p.typeL {
			if used[ti] {
				types = append(types, ti)
			}
		}
	}
	return types, nil
}

// stateNames makes one table of the state names of types: a value name of
// several types is named by its type. It returns, per type, the trace's
// state of each of its values.
func (p *pajeParser) stateNames(types []int) map[int][]int {
	uses := map[string]int{}
	for _, ti := range types {
		for _, n := range p.typeL[ti].names {
			uses[n]++
		}
	}
	stateOf := make(map[int][]int, len(types)) // per type, its value -> the trace's state
	byName := map[string]int{}
	for _, ti := range types {
		pt := p.typeL[ti]
		m := make([]int, len(pt.names))
		for v, n := range pt.names {
			if uses[n] > 1 {
				n = pt.name + ": " + n
			}
			x, ok := byName[n]
			if !ok {
				x = len(p.tr.StateNames)
				byName[n] = x
				p.tr.StateNames = append(p.tr.StateNames, n)
			}
			m[v] = x
		}
		stateOf[ti] = m
	}
	return stateOf
}

// resources adds the resources in container creation order, with their
// events; a container with states of several types gets a child container
// per type.
func (p *pajeParser) resources(types []int, stateOf map[int][]int) {
	first := true
	ncont := len(p.tr.Containers)
	for c := 0; c < ncont; c++ {
		var mine []int
		for _, ti := range types {
			if st := p.stacks[stateKey{c, ti}]; st != nil && len(st.evs) > 0 {
				mine = append(mine, ti)
			}
		}
		for _, ti := range mine {
			st := p.stacks[stateKey{c, ti}]
			r := len(p.tr.Res)
			name, holder := p.tr.Containers[c].Name, c
			if len(mine) > 1 {
				name = p.typeL[ti].name
				holder = len(p.tr.Containers)
				p.tr.Containers = append(p.tr.Containers, Container{Name: name, Parent: c, Resource: -1})
			}
			p.tr.Containers[holder].Resource = r
			p.tr.Res = append(p.tr.Res, aggregate.Resource{Name: name})
			for i := range st.evs {
				st.evs[i].Resource = r
				st.evs[i].State = stateOf[ti][st.evs[i].State]
			}
			if first || st.evs[0].Start < p.tr.Start {
				p.tr.Start = st.evs[0].Start
			}
			if e := st.evs[len(st.evs)-1].End; first || e > p.tr.End {
				p.tr.End = e
			}
			first = false
			p.tr.Events = append(p.tr.Events, st.evs)
		}
	}
}

// parseTime reads a Pajé date (seconds) into ns. Plain decimals are read
// exactly; exponent forms go through float64.
func parseTime(s string) (int64, error) {
	bad := func() (int64, error) { return 0, fmt.Errorf("malformed time %q", s) }
	if s == "" {
		return bad()
	}
	if strings.ContainsAny(s, "eE") {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.Abs(v) > math.MaxInt64/1e9 {
			return bad()
		}
		return int64(math.Round(v * 1e9)), nil
	}
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
	}
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" {
		return bad()
	}
	var sec int64
	for _, c := range []byte(ip) {
		if c < '0' || c > '9' || sec > (math.MaxInt64/1_000_000_000-9)/10 {
			return bad()
		}
		sec = sec*10 + int64(c-'0')
	}
	var ns, scale int64 = 0, 100_000_000
	for i, c := range []byte(fp) {
		if c < '0' || c > '9' {
			return bad()
		}
		if i < 9 {
			ns += int64(c-'0') * scale
			scale /= 10
		} else if i == 9 && c >= '5' {
			ns++ // round to the nearest ns
		}
	}
	v := sec*1_000_000_000 + ns
	if neg {
		v = -v
	}
	return v, nil
}
