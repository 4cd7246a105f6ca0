package flowgraph

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
	"mpiflow/internal/inputfile"
)

// Resolver maps call sites (object file and offset, as the interposer
// records them with dladdr) to function, source file and line: from the
// DWARF debug information when the object has it, else from its symbol
// table. C++ and Rust names are demangled and shown the way pprof shows
// them by default, without parameters and template arguments
// ("ns::Class::method"), unless a site has no source line and another
// function of its object would look the same; the full signature goes to
// CallSite.Signature. Objects are read once and cached.
type Resolver struct {
	objs map[string]*objInfo
}

// NewResolver returns an empty Resolver.
func NewResolver() *Resolver {
	return &Resolver{objs: make(map[string]*objInfo)}
}

type funcRange struct {
	lo, hi uint64
	name   string // as recorded: mangled for C++ (the linkage name)
}

type objInfo struct {
	err   error
	bias  uint64 // added to a site's offset to get a virtual address of the file
	dw    *dwarf.Data
	funcs []funcRange // from DWARF, sorted by lo
	syms  []funcRange // from the symbol tables, sorted by lo
	cus   []cuRange
	// forms maps each short form of the object's function names (see
	// shortForms) to the function it stands for (its name without a clone
	// suffix), or to "" when it stands for several; nil until a name
	// needs it.
	forms map[string]string
	// shown caches the names show gives: a cache by pc held a map entry
	// per call site, 160 MB for a program of 10^6 sites, where the line
	// and function lookups are binary searches.
	shown map[shownKey][2]string
	// lines holds the line table of each unit read so far (lineRows).
	lines map[*dwarf.Entry][]lineRow
}

// place is where a pc is, as a CallSite shows it.
type place struct {
	function, signature, file string
	line                      int
}

// shownKey is what show takes.
type shownKey struct {
	name    string
	located bool
}

// shortForms returns the short forms of a mangled function name, the
// shortest first: without parameters and template arguments (pprof's
// default), then without parameters. It returns nil for a name that does
// not demangle.
func shortForms(name string) []string {
	if isRust(name) {
		short, err := demangle.ToString(name, demangle.NoParams, demangle.NoTemplateParams, demangle.NoEnclosingParams)
		if err != nil {
			return nil
		}
		return []string{short, demangle.Filter(name, demangle.NoParams, demangle.NoEnclosingParams)}
	}
	// One parse for both forms (a C++ name's forms are printed from its
	// AST as demangle.ToString would).
	a, err := demangle.ToAST(name, demangle.NoParams)
	if err != nil {
		return nil
	}
	return []string{demangle.ASTToString(a, demangle.NoTemplateParams, demangle.NoEnclosingParams),
		demangle.ASTToString(a, demangle.NoEnclosingParams)}
}

// isRust reports whether name is mangled as Rust names are: v0 ("_R"), or
// legacy (C++'s nested names ending in a hash, "17h" and 16 hex digits),
// which demangle.ToAST would read as C++.
func isRust(name string) bool {
	if strings.HasPrefix(name, "_R") {
		return true
	}
	base, _, _ := strings.Cut(name, ".")
	return strings.HasPrefix(base, "_ZN") && strings.HasSuffix(base, "E") && len(base) > 23 && base[len(base)-20:len(base)-17] == "17h"
}

type cuRange struct {
	lo, hi uint64
	entry  *dwarf.Entry
}

// Resolve fills in Function, Signature, File and Line of cs. Sites without
// an object (dladdr found none) are left alone; an object that cannot be
// read gives an error and leaves the site unresolved, so callers can fall
// back to the raw address.
func (r *Resolver) Resolve(cs *CallSite) error {
	if cs.Object == "" {
		return nil
	}
	o := r.objs[cs.Object]
	if o == nil {
		o = loadObject(cs.Object)
		r.objs[cs.Object] = o
	}
	if o.err != nil {
		return o.err
	}
	// The site is a return address: the call instruction ends just
	// before it, so look up the byte before.
	pc := cs.Offset + o.bias
	if pc > 0 {
		pc--
	}
	p := o.place(pc)
	cs.Function, cs.Signature, cs.File, cs.Line = p.function, p.signature, p.file, p.line
	return nil
}

// place resolves pc, an address of the object's file.
func (o *objInfo) place(pc uint64) place {
	var p place
	if o.dw != nil {
		p.file, p.line = o.line(pc)
	}
	fn := lookup(o.funcs, pc)
	if fn == "" {
		fn = lookup(o.syms, pc)
	}
	k := shownKey{fn, p.line > 0}
	s, ok := o.shown[k]
	if !ok {
		s[0], s[1] = o.show(fn, k.located)
		if o.shown == nil {
			o.shown = make(map[shownKey][2]string)
		}
		o.shown[k] = s
	}
	p.function, p.signature = s[0], s[1]
	return p
}

// show returns the name to show for the function recorded as name, and
// its full demangled signature when that differs. A mangled name is shown
// in the shortest of its shortForms that no other function of the object
// shares, or else in full; a site with a source line (located) is told
// apart by it, so it gets the shortest form. A name that does not
// demangle is shown as recorded.
func (o *objInfo) show(name string, located bool) (string, string) {
	full, err := demangle.ToString(name, demangle.NoClones)
	if err != nil {
		return name, ""
	}
	shown := full
	for _, short := range shortForms(name) {
		if located || o.unique(short) {
			shown = short
			break
		}
	}
	if shown == full {
		return full, ""
	}
	return shown, full
}

// unique reports whether form, a short form of a function name, stands
// for one function of the object only. The first call demangles all of
// the object's function names.
func (o *objInfo) unique(form string) bool {
	if o.forms == nil {
		o.forms = make(map[string]string)
		add := func(form, fn string) {
			if f, ok := o.forms[form]; ok && f != fn {
				fn = ""
			}
			o.forms[form] = fn
		}
		for _, rs := range [][]funcRange{o.funcs, o.syms} {
			for _, r := range rs {
				// Clones (name.constprop.0, name.cold) are parts of the
				// function they copy: mangled names have no other dots.
				fn, _, _ := strings.Cut(r.name, ".")
				forms := shortForms(r.name)
				if forms == nil {
					add(r.name, fn) // C names share the namespace
				}
				for _, f := range forms {
					add(f, fn)
				}
			}
		}
	}
	return o.forms[form] != ""
}

// ResolveSites resolves every site of g with a new Resolver and returns the
// first error (the other sites are still resolved).
func (g *Graph) ResolveSites() error {
	return NewResolver().ResolveAll(g.Sites)
}

// ResolveAll resolves each site that has no function yet and returns the
// first error.
func (r *Resolver) ResolveAll(sites []CallSite) error {
	var first error
	for i := range sites {
		if sites[i].Function != "" {
			continue
		}
		if err := r.Resolve(&sites[i]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func lookup(rs []funcRange, pc uint64) string {
	// Ranges are sorted by start, enclosing ones first, so scanning back
	// from the last range starting at or before pc finds the innermost
	// range that holds it.
	for i := sort.Search(len(rs), func(i int) bool { return rs[i].lo > pc }) - 1; i >= 0; i-- {
		if pc < rs[i].hi {
			return rs[i].name
		}
		if pc-rs[i].lo > 1<<24 {
			break // no function is that long: stop scanning
		}
	}
	return ""
}

func loadObject(path string) *objInfo {
	o := &objInfo{}
	if err := inputfile.Check(path); err != nil {
		o.err = fmt.Errorf("resolve call sites in %s: %w", path, err)
		return o
	}
	f, err := elf.Open(path)
	if err != nil {
		o.err = fmt.Errorf("resolve call sites in %s: %w", path, err)
		return o
	}
	defer f.Close()
	if f.Type == elf.ET_EXEC {
		// dladdr's base of a non-PIE executable is where its first
		// segment is mapped, not 0.
		first := true
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && (first || p.Vaddr-p.Off < o.bias) {
				o.bias = p.Vaddr - p.Off
				first = false
			}
		}
	}
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, err := get()
		if err != nil {
			continue
		}
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
				hi := s.Value + s.Size
				if s.Size == 0 {
					hi = s.Value + 1
				}
				o.syms = append(o.syms, funcRange{lo: s.Value, hi: hi, name: s.Name})
			}
		}
	}
	sortRanges(o.syms)
	if d, err := f.DWARF(); err == nil {
		o.dw = d
		// Every entry takes at least a byte of .debug_info.
		limit := uint64(1 << 30)
		if s := f.Section(".debug_info"); s != nil {
			limit = s.Size
		}
		o.readDWARF(limit)
	}
	return o
}

func sortRanges(rs []funcRange) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].lo != rs[j].lo {
			return rs[i].lo < rs[j].lo
		}
		return rs[i].hi > rs[j].hi // the enclosing range first
	})
}

// readDWARF collects the address ranges of the compile units, the
// functions and the inlined calls, of at most limit entries: damaged data
// can make the reader return entries without end.
func (o *objInfo) readDWARF(limit uint64) {
	rd := o.dw.Reader()
	var cu *dwarf.Entry
	for n := uint64(0); n <= limit; n++ {
		e, err := rd.Next()
		if err != nil || e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			cu = e
			if rs, err := o.dw.Ranges(e); err == nil {
				for _, r := range rs {
					o.cus = append(o.cus, cuRange{lo: r[0], hi: r[1], entry: cu})
				}
			}
		case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine:
			// An inlined call's range lies in its caller's, so the
			// innermost range names the function that the line table's
			// source line is in.
			name := o.funcName(e)
			if name == "" {
				continue
			}
			if rs, err := o.dw.Ranges(e); err == nil {
				for _, r := range rs {
					o.funcs = append(o.funcs, funcRange{lo: r[0], hi: r[1], name: name})
				}
			}
		}
	}
	sortRanges(o.funcs)
}

// funcName is a subprogram's linkage name (mangled, qualified) or else its
// name, following abstract origins and specifications (out-of-line copies
// of inline or C++ member functions).
func (o *objInfo) funcName(e *dwarf.Entry) string {
	name := ""
	for depth := 0; e != nil && depth < 4; depth++ {
		if n, ok := e.Val(dwarf.AttrLinkageName).(string); ok {
			return n
		}
		if n, ok := e.Val(dwarf.AttrName).(string); ok && name == "" {
			name = n
		}
		var ref dwarf.Offset
		var ok bool
		if ref, ok = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); !ok {
			if ref, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset); !ok {
				break
			}
		}
		rd := o.dw.Reader()
		rd.Seek(ref)
		next, err := rd.Next()
		if err != nil {
			break
		}
		e = next
	}
	return name
}

// line finds the source position of pc in the line table of its unit.
func (o *objInfo) line(pc uint64) (string, int) {
	for _, c := range o.cus {
		if pc < c.lo || pc >= c.hi {
			continue
		}
		rows, ok := o.lines[c.entry]
		if !ok {
			rows = o.lineRows(c.entry)
			if o.lines == nil {
				o.lines = make(map[*dwarf.Entry][]lineRow)
			}
			o.lines[c.entry] = rows
		}
		// The row that holds pc is the last one starting at or before
		// it; rows of discarded code may overlap real ones, so a few
		// before it are tried too.
		i := sort.Search(len(rows), func(i int) bool { return rows[i].lo > pc }) - 1
		for k := i; k >= 0 && k > i-4; k-- {
			if pc < rows[k].hi {
				return rows[k].file, rows[k].line
			}
		}
		return "", 0
	}
	return "", 0
}

// lineRow is the source position of the addresses [lo, hi).
type lineRow struct {
	lo, hi uint64
	file   string
	line   int
}

// lineRows reads the line table of a unit once, as rows sorted by address:
// a site's lookup is then a binary search, where scanning the table for
// each site took time quadratic in the sites of a generated unit of 10^6
// calls. The whole table is read because dwarf.LineReader.SeekPC takes its
// sequences to be in address order, which those of C++ units (one per
// section: inline functions, .text.startup, cold parts) often are not.
func (o *objInfo) lineRows(cu *dwarf.Entry) []lineRow {
	lr, err := o.dw.LineReader(cu)
	if err != nil || lr == nil {
		return nil
	}
	var rows []lineRow
	var prev, le dwarf.LineEntry
	inSeq := false
	for lr.Next(&le) == nil {
		if inSeq && prev.Address < le.Address {
			r := lineRow{lo: prev.Address, hi: le.Address, line: prev.Line}
			if prev.File != nil {
				r.file = prev.File.Name
			}
			rows = append(rows, r)
		}
		prev, inSeq = le, !le.EndSequence
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].lo < rows[j].lo })
	return rows
}
