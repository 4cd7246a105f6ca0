package flowgraph

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Resolver maps call sites (object file and offset, as the interposer
// records them with dladdr) to function, source file and line: from the
// DWARF debug information when the object has it, else from its symbol
// table. Objects are read once and cached.
type Resolver struct {
	objs map[string]*objInfo
}

// NewResolver returns an empty Resolver.
func NewResolver() *Resolver {
	return &Resolver{objs: make(map[string]*objInfo)}
}

type funcRange struct {
	lo, hi uint64
	name   string
}

type objInfo struct {
	err   error
	bias  uint64 // added to a site's offset to get a virtual address of the file
	dw    *dwarf.Data
	funcs []funcRange // from DWARF, sorted by lo
	syms  []funcRange // from the symbol tables, sorted by lo
	cus   []cuRange
}

type cuRange struct {
	lo, hi uint64
	entry  *dwarf.Entry
}

// Resolve fills in Function, File and Line of cs. Sites without an object
// (dladdr found none) are left alone; an object that cannot be read gives
// an error and leaves the site unresolved, so callers can fall back to the
// raw address.
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
	if fn := lookup(o.funcs, pc); fn != "" {
		cs.Function = fn
	} else {
		cs.Function = lookup(o.syms, pc)
	}
	if o.dw != nil {
		if file, line := o.line(pc); line > 0 {
			cs.File, cs.Line = file, line
		}
	}
	return nil
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
		o.readDWARF()
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

// readDWARF collects the compile units' and functions' address ranges.
func (o *objInfo) readDWARF() {
	rd := o.dw.Reader()
	var cu *dwarf.Entry
	for {
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
		case dwarf.TagSubprogram:
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

// funcName is a subprogram's name, following abstract origins and
// specifications (out-of-line copies of inline or C++ member functions).
func (o *objInfo) funcName(e *dwarf.Entry) string {
	for depth := 0; e != nil && depth < 4; depth++ {
		if n, ok := e.Val(dwarf.AttrName).(string); ok {
			return n
		}
		var ref dwarf.Offset
		var ok bool
		if ref, ok = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); !ok {
			if ref, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset); !ok {
				return ""
			}
		}
		rd := o.dw.Reader()
		rd.Seek(ref)
		next, err := rd.Next()
		if err != nil {
			return ""
		}
		e = next
	}
	return ""
}

// line finds the source position of pc in the line table of its unit.
func (o *objInfo) line(pc uint64) (string, int) {
	for _, c := range o.cus {
		if pc < c.lo || pc >= c.hi {
			continue
		}
		lr, err := o.dw.LineReader(c.entry)
		if err != nil || lr == nil {
			return "", 0
		}
		var le dwarf.LineEntry
		if err := lr.SeekPC(pc, &le); err != nil {
			if errors.Is(err, dwarf.ErrUnknownPC) || errors.Is(err, io.EOF) {
				continue
			}
			return "", 0
		}
		if le.File == nil {
			return "", le.Line
		}
		return le.File.Name, le.Line
	}
	return "", 0
}
