package main

import (
	"context"
	"flag"
	"fmt"
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

// longClock is the long run of testdata/clock/clockcheck.c with the TSC:
// TestMain starts it so that it runs alongside the other tests, and
// TestClock waits for it.
var longClock struct {
	done chan struct{}
	out  []byte
	err  error
	skip string
}

// startLongClock starts clockcheck for 60 s (5 s with -short) in 2 threads
// that leave most of the CPU to the other tests, unless -run leaves out
// TestClock; the returned function stops it.
func startLongClock() (stop func()) {
	longClock.done = make(chan struct{})
	run := flag.Lookup("test.run").Value.String()
	if ok, _ := regexp.MatchString(run, "TestClock"); run != "" && !ok {
		close(longClock.done)
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(longClock.done)
		if !invariantTSC() {
			longClock.skip = "the CPU does not report constant_tsc and nonstop_tsc"
			return
		}
		dir, err := os.MkdirTemp("", "clockcheck")
		if err != nil {
			longClock.err = err
			return
		}
		defer os.RemoveAll(dir)
		bin, err := compileClockcheck(dir)
		if err != nil {
			longClock.err = err
			return
		}
		seconds := "60"
		if testing.Short() {
			seconds = "5"
		}
		cmd := exec.CommandContext(ctx, bin, seconds, "2", "light")
		cmd.Env = append(os.Environ(), "MPIFLOW_CLOCK=tsc")
		longClock.out, longClock.err = cmd.CombinedOutput()
	}()
	return func() {
		cancel()
		<-longClock.done
	}
}

// TestClock checks mf_now with clockcheck, which calls it in several
// threads (sleeping now and then) and fails if a thread's times go
// backwards or a time is more than 1 us from CLOCK_MONOTONIC read around
// it. With the TSC it runs for 60 s (startLongClock), long enough for the
// tick rate to be measured over a long time and re-synchronized tens of
// thousands of times.
func TestClock(t *testing.T) {
	t.Parallel()
	line := regexp.MustCompile(`^clock (.+) calls (\d+) checked (\d+) ahead_ns (\d+) behind_ns (\d+)$`)
	check := func(t *testing.T, out []byte, err error, want string) {
		require.NoError(t, err, "%s", out)
		m := line.FindStringSubmatch(strings.TrimSpace(string(out)))
		require.NotNil(t, m, "unexpected output: %s", out)
		assert.Equal(t, want, m[1])
		checked, _ := strconv.Atoi(m[3])
		assert.Greater(t, checked, 1000, "too few checks: %s", out)
		t.Logf("%s", out)
	}
	t.Run("tsc", func(t *testing.T) {
		<-longClock.done
		if longClock.skip != "" {
			t.Skip(longClock.skip)
		}
		check(t, longClock.out, longClock.err, "TSC synchronized to CLOCK_MONOTONIC")
	})
	t.Run("monotonic", func(t *testing.T) {
		cmd := exec.Command(buildClockcheck(t), "1", "2")
		cmd.Env = append(os.Environ(), "MPIFLOW_CLOCK=monotonic")
		out, err := cmd.CombinedOutput()
		check(t, out, err, "CLOCK_MONOTONIC")
	})
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
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("needs a C compiler")
	}
	bin, err := compileClockcheck(t.TempDir())
	require.NoError(t, err)
	return bin
}

// compileClockcheck builds clockcheck into dir.
func compileClockcheck(dir string) (string, error) {
	bin := filepath.Join(dir, "clockcheck")
	out, err := exec.Command("cc", "-O2", "-std=gnu11", "-pthread", "-Icsrc", "-o", bin,
		"testdata/clock/clockcheck.c", "csrc/clock.c").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build clockcheck: %v\n%s", err, out)
	}
	return bin, nil
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
