package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClock runs testdata/clock/clockcheck.c, which calls mf_now in several
// threads (some sleeping now and then) and fails if a thread's times go
// backwards or a time is more than 1 us from CLOCK_MONOTONIC read around
// it. With the TSC it runs for 60 s (5 s with -short), long enough for the
// tick rate to be measured and re-synchronized thousands of times.
func TestClock(t *testing.T) {
	t.Parallel()
	bin := buildClockcheck(t)

	long := "60"
	if testing.Short() {
		long = "5"
	}
	line := regexp.MustCompile(`^clock (.+) calls (\d+) checked (\d+) ahead_ns (\d+) behind_ns (\d+)$`)
	for _, tc := range []struct {
		setting, seconds, want string
		tsc                    bool
	}{
		{"tsc", long, "TSC synchronized to CLOCK_MONOTONIC", true},
		{"monotonic", "1", "CLOCK_MONOTONIC", false},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			if tc.tsc && !invariantTSC() {
				t.Skip("the CPU does not report constant_tsc and nonstop_tsc")
			}
			cmd := exec.Command(bin, tc.seconds, "3")
			cmd.Env = append(os.Environ(), "MPIFLOW_CLOCK="+tc.setting)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			m := line.FindStringSubmatch(strings.TrimSpace(string(out)))
			require.NotNil(t, m, "unexpected output: %s", out)
			assert.Equal(t, tc.want, m[1])
			checked, _ := strconv.Atoi(m[3])
			assert.Greater(t, checked, 1000, "too few checks: %s", out)
			t.Logf("%s", out)
		})
	}
}

// TestClockSettingWarns: an unknown MPIFLOW_CLOCK value is reported, and
// the clock is chosen as without it.
func TestClockSettingWarns(t *testing.T) {
	t.Parallel()
	bin := buildClockcheck(t)
	cmd := exec.Command(bin, "0.1", "1")
	cmd.Env = append(os.Environ(), "MPIFLOW_CLOCK=hpet")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "warning MPIFLOW_CLOCK=hpet: use tsc or monotonic")
	want := "clock CLOCK_MONOTONIC"
	if invariantTSC() {
		want = "clock TSC synchronized to CLOCK_MONOTONIC"
	}
	assert.Contains(t, string(out), want)
}

// buildClockcheck compiles testdata/clock/clockcheck.c with csrc/clock.c.
func buildClockcheck(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("needs a C compiler")
	}
	bin := filepath.Join(t.TempDir(), "clockcheck")
	out, err := exec.Command(cc, "-O2", "-std=gnu11", "-pthread", "-Icsrc", "-o", bin,
		"testdata/clock/clockcheck.c", "csrc/clock.c").CombinedOutput()
	require.NoError(t, err, "build clockcheck: %s", out)
	return bin
}

// invariantTSC tells whether clock.c chooses the TSC by default here.
func invariantTSC() bool {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "386" {
		return false
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "flags") {
			f := " " + l + " "
			return strings.Contains(f, " constant_tsc ") && strings.Contains(f, " nonstop_tsc ")
		}
	}
	return false
}
