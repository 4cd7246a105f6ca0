//go:build cgo && !nootf2

package otf2dl

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tryLoad is load under mu.
func tryLoad(env string, paths ...string) error {
	mu.Lock()
	defer mu.Unlock()
	return load(env, paths)
}

// TestLoad: the library loads (building this package needs OTF2's
// headers, from the package that depends on the library), once and again.
func TestLoad(t *testing.T) {
	require.NoError(t, Load())
	require.NoError(t, Load(), "loaded already")
	require.NoError(t, tryLoad(Library), "a second handle of the same library")
}

// TestLoadErrors: a library that cannot be loaded, or is not OTF2, gives an
// error naming the library, the package and the loader's reason; loading
// does not stick to a failure, nor does a failure undo a loaded library.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		env   string
		paths []string
		want  []string
	}{
		{"missing override", "/nonexistent", nil, []string{
			"cannot load the OTF2 library (" + Library + ", Debian package " + Package + ") from MPIFLOW_OTF2_LIB=/nonexistent: ",
			"/nonexistent: cannot open shared object file"}},
		{"override not OTF2", "libc.so.6", nil, []string{
			"MPIFLOW_OTF2_LIB=libc.so.6: ", "undefined symbol: OTF2_"}},
		{"no library", "", []string{"/nonexistent/" + Library, "/nonexistent/libopen-trace-format2.so"}, []string{
			"cannot load the OTF2 library " + Library + " (install Debian package " + Package + ", or set MPIFLOW_OTF2_LIB to its path): ",
			"/nonexistent/" + Library + ": cannot open shared object file",
			"; /nonexistent/libopen-trace-format2.so: cannot open shared object file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tryLoad(tt.env, tt.paths...)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	// The override is the only library tried.
	require.Error(t, tryLoad("/nonexistent", Library))
	require.NoError(t, tryLoad("", "/nonexistent/"+Library, Library), "the next path after a failing one")
	require.NoError(t, Load())
}

// childEnv makes TestLoadChild run: it calls Load in a process of its
// own, where nothing was loaded before, and prints its error.
const childEnv = "MPIFLOW_TEST_OTF2DL_CHILD"

func TestLoadChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestLoadEnv")
	}
	if err := Load(); err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
	} else {
		os.Stdout.WriteString("loaded\n")
	}
}

// TestLoadEnv: Load takes the library of MPIFLOW_OTF2_LIB, and only it.
func TestLoadEnv(t *testing.T) {
	child := func(lib string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLoadChild$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1", EnvLib+"="+lib)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	out := child("/nonexistent")
	assert.Contains(t, out, "error: cannot load the OTF2 library ("+Library+", Debian package "+Package+") from MPIFLOW_OTF2_LIB=/nonexistent: ")
	assert.NotContains(t, out, "loaded\n")
	assert.Contains(t, child(Library), "loaded\n")
	assert.Contains(t, child(""), "loaded\n", "empty: the default libraries")
}
