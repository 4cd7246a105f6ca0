package flowgraph

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// siteProg prints the offset (return address - dladdr base) of the call
// to callee in caller, the way the interposer records a call site. The
// call is on line 11.
const siteProg = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
__attribute__((noinline)) void callee(void) {
	void *ra = __builtin_return_address(0);
	Dl_info info;
	dladdr(ra, &info);
	printf("%lu\n", (unsigned long)((char *)ra - (char *)info.dli_fbase));
}
__attribute__((noinline)) void caller(void) {
	callee();
	__asm__ volatile("");
}
int main(void) { caller(); return 0; }
`

func TestResolve(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("needs a C compiler (cc) to build a test binary")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "site.c")
	require.NoError(t, os.WriteFile(src, []byte(siteProg), 0o644))
	tests := []struct {
		name     string
		flags    []string
		wantFunc string
		wantLine int
	}{
		{"pie-dwarf", []string{"-g", "-O0", "-fPIE", "-pie"}, "caller", 11},
		{"nopie-dwarf", []string{"-g", "-O0", "-fno-PIE", "-no-pie"}, "caller", 11},
		{"symbols-only", []string{"-O0"}, "caller", 0},
		{"stripped", []string{"-O0", "-s"}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(dir, tt.name)
			off := buildSite(t, cc, src, bin, tt.flags...)
			cs := CallSite{Object: bin, Offset: off}
			require.NoError(t, NewResolver().Resolve(&cs))
			assert.Equal(t, tt.wantFunc, cs.Function)
			assert.Equal(t, tt.wantLine, cs.Line)
			if tt.wantLine > 0 {
				assert.Equal(t, "site.c", filepath.Base(cs.File))
			} else {
				assert.Empty(t, cs.File)
			}
		})
	}
}

// siteProgCxx is siteProg in C++: the call is on line 12, in an inline
// member function of a class in a namespace, overloaded by one defined out
// of the class. At -O0 the function is out of line; at -O2 it is inlined
// into main, which is then in .text.startup, before the rest of the code
// but after it in the line table.
const siteProgCxx = `#include <dlfcn.h>
#include <cstdio>
__attribute__((noinline)) void callee() {
	void *ra = __builtin_return_address(0);
	Dl_info info;
	dladdr(ra, &info);
	std::printf("%lu\n", (unsigned long)((char *)ra - (char *)info.dli_fbase));
}
namespace app {
struct Solver {
	void halo(double);
	void halo(int) { callee(); }
};
void Solver::halo(double) {}
}
int main() {
	app::Solver s;
	s.halo(1);
	__asm__ volatile("");
	s.halo(2.0);
	return 0;
}
`

// TestResolveCxx resolves a call site in a C++ member function: its name
// is demangled, without parameters when the source line tells the
// overloads apart, with them otherwise; inlined, it is still named by the
// function that the source line is in.
func TestResolveCxx(t *testing.T) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skip("needs a C++ compiler (c++) to build a test binary")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "site.cpp")
	require.NoError(t, os.WriteFile(src, []byte(siteProgCxx), 0o644))
	tests := []struct {
		name     string
		flags    []string
		wantFunc string
		wantSig  string
		wantLine int
	}{
		{"pie-dwarf", []string{"-g", "-O0", "-fPIE", "-pie"}, "app::Solver::halo", "app::Solver::halo(int)", 12},
		{"nopie-dwarf", []string{"-g", "-O0", "-fno-PIE", "-no-pie"}, "app::Solver::halo", "app::Solver::halo(int)", 12},
		{"pie-dwarf-inlined", []string{"-g", "-O2", "-fPIE", "-pie"}, "app::Solver::halo", "app::Solver::halo(int)", 12},
		{"symbols-only", []string{"-O0"}, "app::Solver::halo(int)", "", 0},
		{"stripped", []string{"-O0", "-s"}, "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(dir, tt.name)
			off := buildSite(t, cxx, src, bin, tt.flags...)
			cs := CallSite{Object: bin, Offset: off}
			require.NoError(t, NewResolver().Resolve(&cs))
			assert.Equal(t, tt.wantFunc, cs.Function)
			assert.Equal(t, tt.wantSig, cs.Signature)
			assert.Equal(t, tt.wantLine, cs.Line)
			if tt.wantLine > 0 {
				assert.Equal(t, "site.cpp", filepath.Base(cs.File))
			} else {
				assert.Empty(t, cs.File)
			}
		})
	}
}

// TestShowNames shows the names of an object's functions: demangled, as
// short as the object's other functions allow, and as recorded when they
// do not demangle.
func TestShowNames(t *testing.T) {
	names := []string{
		"_ZN9LAMMPS_NS9CommBrick12forward_commEi", "_ZN9LAMMPS_NS9CommBrick12forward_commEi.constprop.0",
		"_ZN2ns1C1fEi", "_ZN2ns1C1fEd", // overloads
		"_ZNK2ns1C1gEv", "_ZN2ns1C1gEv", // const overloads
		"_ZN2ns1hIiEEvT_", "_ZN2ns1hIdEEvT_", // template instances
		"_Z1fi", "f", // a C function of the same name
		"_ZN12_GLOBAL__N_13fooEv", "main", "_Zbad",
		"_ZN4core3fmt5write17h0123456789abcdefE", "_RNvCs15kBYyAo9fc_7mycrate7example", // Rust
	}
	o := &objInfo{}
	for i, n := range names {
		o.syms = append(o.syms, funcRange{lo: uint64(16 * i), hi: uint64(16*i + 8), name: n})
	}
	tests := []struct {
		name    string
		located bool
		want    string
		wantSig string
	}{
		{"_ZN9LAMMPS_NS9CommBrick12forward_commEi", false, "LAMMPS_NS::CommBrick::forward_comm", "LAMMPS_NS::CommBrick::forward_comm(int)"},
		{"_ZN9LAMMPS_NS9CommBrick12forward_commEi.constprop.0", false, "LAMMPS_NS::CommBrick::forward_comm", "LAMMPS_NS::CommBrick::forward_comm(int)"},
		{"_ZN2ns1C1fEd", false, "ns::C::f(double)", ""},
		{"_ZN2ns1C1fEd", true, "ns::C::f", "ns::C::f(double)"},
		{"_ZNK2ns1C1gEv", false, "ns::C::g() const", ""},
		{"_ZN2ns1C1gEv", false, "ns::C::g()", ""},
		{"_ZN2ns1hIiEEvT_", false, "ns::h<int>", "void ns::h<int>(int)"},
		{"_ZN2ns1hIiEEvT_", true, "ns::h", "void ns::h<int>(int)"},
		{"_Z1fi", false, "f(int)", ""},
		{"f", false, "f", ""},
		{"_ZN12_GLOBAL__N_13fooEv", false, "(anonymous namespace)::foo", "(anonymous namespace)::foo()"},
		{"main", false, "main", ""},
		{"_ZN4core3fmt5write17h0123456789abcdefE", false, "core::fmt::write", ""},
		{"_RNvCs15kBYyAo9fc_7mycrate7example", false, "mycrate::example", ""},
		{"_Zbad", false, "_Zbad", ""},
		{"", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, sig := o.show(tt.name, tt.located)
			assert.Equal(t, tt.want, name)
			assert.Equal(t, tt.wantSig, sig)
		})
	}
}

func TestResolveMissingObject(t *testing.T) {
	r := NewResolver()
	sites := []CallSite{{Object: "/nonexistent/app", Offset: 10}, {Addr: 0x1234}}
	err := r.ResolveAll(sites)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/app")
	assert.Empty(t, sites[0].Function)
	assert.Equal(t, uint64(0x1234), sites[1].Addr)
}

// buildSite compiles the test program at src (siteProg, siteProgCxx) to
// bin with compiler cc and flags, and runs it: it prints the offset of its
// call site in bin.
func buildSite(t *testing.T, cc, src, bin string, flags ...string) uint64 {
	t.Helper()
	out, err := exec.Command(cc, append(flags, "-o", bin, src, "-ldl")...).CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command(bin).Output()
	require.NoError(t, err)
	off, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	require.NoError(t, err)
	return off
}

// TestResolveDamagedDWARF: an object whose DWARF abbreviations are damaged
// anywhere, one byte at a time, resolves or fails, in bounded time.
func TestResolveDamagedDWARF(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("needs a C compiler (cc) to build a test binary")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "site.c"), filepath.Join(dir, "site")
	require.NoError(t, os.WriteFile(src, []byte(siteProg), 0o644))
	off := buildSite(t, cc, src, bin, "-g", "-O0")
	cs := CallSite{Object: bin, Offset: off}
	require.NoError(t, NewResolver().Resolve(&cs))
	require.Equal(t, "caller", cs.Function, "the undamaged binary resolves")
	ef, err := elf.Open(bin)
	require.NoError(t, err)
	defer ef.Close()
	good, err := os.ReadFile(bin)
	require.NoError(t, err)
	damaged := filepath.Join(dir, "damaged")
	for _, name := range []string{".debug_abbrev", ".debug_info", ".debug_line"} {
		sec := ef.Section(name)
		require.NotNil(t, sec, name)
		for k := uint64(0); k < sec.Size && k < 4096; k++ {
			for _, x := range []byte{0xff, 0x01, 0x80} {
				b := bytes.Clone(good)
				b[sec.Offset+k] ^= x
				require.NoError(t, os.WriteFile(damaged, b, 0o755))
				done := make(chan struct{})
				go func() {
					defer close(done)
					cs := CallSite{Object: damaged, Offset: off}
					NewResolver().Resolve(&cs)
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("byte %d of %s ^ %#x: resolving still runs after 10 s", k, name, x)
				}
			}
		}
	}
}

// TestResolveFIFOObject: an object that is a named pipe is an error, not
// a reader blocked until something writes to it.
func TestResolveFIFOObject(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "app")
	require.NoError(t, syscall.Mkfifo(fifo, 0o755))
	sites := []CallSite{{Object: fifo, Offset: 10}}
	err := NewResolver().ResolveAll(sites)
	require.ErrorContains(t, err, fifo+": not a regular file (a named pipe)")
	assert.Empty(t, sites[0].Function)
}

func TestLookupInnermost(t *testing.T) {
	rs := []funcRange{{lo: 100, hi: 200, name: "outer"}, {lo: 120, hi: 140, name: "inner"}, {lo: 300, hi: 310, name: "other"}}
	sortRanges(rs)
	for pc, want := range map[uint64]string{99: "", 100: "outer", 125: "inner", 150: "outer", 250: "", 305: "other", 310: ""} {
		assert.Equal(t, want, lookup(rs, pc), "pc %d", pc)
	}
}

func TestCallSiteLabel(t *testing.T) {
	tests := []struct {
		name string
		cs   CallSite
		want string
	}{
		{"function and line", CallSite{Object: "/bin/app", Offset: 0x10, Function: "ns::C::f", File: "/src/dir/c.cpp", Line: 7}, "ns::C::f c.cpp:7"},
		{"function", CallSite{Object: "/bin/app", Offset: 0x10, Function: "ns::C::f(int)"}, "ns::C::f(int)"},
		{"line", CallSite{Object: "/bin/app", Offset: 0x10, File: "/src/dir/c.cpp", Line: 7}, "c.cpp:7"},
		{"object", CallSite{Addr: 0x5010, Object: "/lib/libapp.so.1", Offset: 0x10}, "libapp.so.1+0x10"},
		{"address", CallSite{Addr: 0x5010}, "0x5010"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.cs.Label())
		})
	}
}

// manySites compiles a program of n calls to callee, each on its line (line
// 11+k for call k) of one function, runs it and returns the program and
// the offsets of its call sites, in order.
func manySites(tb testing.TB, n int) (string, []uint64) {
	tb.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		tb.Skip("needs a C compiler (cc) to build a test binary")
	}
	dir := tb.TempDir()
	var src strings.Builder
	prog, _, _ := strings.Cut(siteProg, "__attribute__((noinline)) void caller")
	src.WriteString(prog + "void caller(void) {\n")
	for range n {
		src.WriteString("\tcallee();\n")
	}
	src.WriteString("}\nint main(void) { caller(); return 0; }\n")
	path := filepath.Join(dir, "sites.c")
	require.NoError(tb, os.WriteFile(path, []byte(src.String()), 0o644))
	bin := filepath.Join(dir, "sites")
	out, err := exec.Command(cc, "-g", "-O0", "-o", bin, path, "-ldl").CombinedOutput()
	require.NoError(tb, err, string(out))
	out, err = exec.Command(bin).Output()
	require.NoError(tb, err)
	var offs []uint64
	for _, l := range strings.Fields(string(out)) {
		off, err := strconv.ParseUint(l, 10, 64)
		require.NoError(tb, err)
		offs = append(offs, off)
	}
	require.Len(tb, offs, n)
	return bin, offs
}

// TestResolveManySites resolves every call of a function of many calls to
// its own line (one unit's line table of many rows, looked up per site).
func TestResolveManySites(t *testing.T) {
	bin, offs := manySites(t, 2000)
	sites := make([]CallSite, len(offs))
	for i, off := range offs {
		sites[i] = CallSite{Object: bin, Offset: off}
	}
	require.NoError(t, NewResolver().ResolveAll(sites))
	for k, cs := range sites {
		if !assert.Equal(t, 11+k, cs.Line, "call %d", k) {
			break
		}
		assert.Equal(t, "caller", cs.Function)
	}
}

// BenchmarkResolveManySites resolves 20,000 call sites of one unit: linear
// in the sites (scanning the unit's line table for each was quadratic: a
// generated program of 10^6 call sites did not resolve in 10 minutes).
func BenchmarkResolveManySites(b *testing.B) {
	bin, offs := manySites(b, 20000)
	b.ResetTimer()
	for range b.N {
		sites := make([]CallSite, len(offs))
		for i, off := range offs {
			sites[i] = CallSite{Object: bin, Offset: off}
		}
		require.NoError(b, NewResolver().ResolveAll(sites))
	}
}
