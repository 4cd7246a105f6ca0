package flowgraph

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
			out, err := exec.Command(cc, append(tt.flags, "-o", bin, src, "-ldl")...).CombinedOutput()
			require.NoError(t, err, string(out))
			out, err = exec.Command(bin).Output()
			require.NoError(t, err)
			off, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
			require.NoError(t, err)

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

func TestResolveMissingObject(t *testing.T) {
	r := NewResolver()
	sites := []CallSite{{Object: "/nonexistent/app", Offset: 10}, {Addr: 0x1234}}
	err := r.ResolveAll(sites)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/app")
	assert.Empty(t, sites[0].Function)
	assert.Equal(t, uint64(0x1234), sites[1].Addr)
}

func TestLookupInnermost(t *testing.T) {
	rs := []funcRange{{lo: 100, hi: 200, name: "outer"}, {lo: 120, hi: 140, name: "inner"}, {lo: 300, hi: 310, name: "other"}}
	sortRanges(rs)
	for pc, want := range map[uint64]string{99: "", 100: "outer", 125: "inner", 150: "outer", 250: "", 305: "other", 310: ""} {
		assert.Equal(t, want, lookup(rs, pc), "pc %d", pc)
	}
}
