package aggregate

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// ValueEvent is one interval of time during which a variable of a
// resource kept a value (a piece of a Pajé variable). Times are integer
// nanoseconds on the source's common time axis.
type ValueEvent struct {
	Resource int // index into the source's resources
	Variable int // index into the source's variable names
	Start    int64
	End      int64
	Value    float64
}

// Values is a Source of variables held in memory (Pajé variables, such as
// SimGrid's power and bandwidth per host and link): its "states" are the
// variables, and a cell of its model holds the time integral of the
// variable over the slice, as Viva and Ocelotl aggregate variables.
//
// Cells are integers, so each variable's integral is stored in ns at the
// variable's peak |value| over the trace: a cell divided by the slice
// length is the variable's mean over the slice as a share of its peak.
// One scale per variable leaves the partition of a single variable as
// its raw integral gives it, and makes variables of different units
// comparable.
type Values struct {
	Res       []Resource
	Variables []string
	Start     int64
	End       int64
	// Events holds the pieces of each resource's variables, in any order.
	Events [][]ValueEvent
	// Spec is the hierarchy of the resources (DefaultSpec), nil for all
	// resources under one root.
	Spec *Spec

	once  sync.Once
	peaks []float64
}

// Resources implements Source.
func (v *Values) Resources() []Resource { return v.Res }

// States implements Source: the variables.
func (v *Values) States() []string { return v.Variables }

// Span implements Source.
func (v *Values) Span() (int64, int64) { return v.Start, v.End }

// Open implements Source; a Values has no states to read, Build
// integrates its variables.
func (v *Values) Open(int) (Reader, error) {
	return nil, errors.New("a source of variables has no states (Build reads its variables)")
}

// DefaultSpec is v.Spec, or all resources under one root.
func (v *Values) DefaultSpec() *Spec {
	if v.Spec != nil {
		return v.Spec
	}
	return FlatSpec("all", v.Res)
}

// scales returns, per variable, the factor from value ns to cell units:
// 1 / its peak |value|, 0 for a variable that is always 0.
func (v *Values) scales() []float64 {
	v.once.Do(func() {
		v.peaks = make([]float64, len(v.Variables))
		for _, evs := range v.Events {
			for _, ev := range evs {
				if uint(ev.Variable) < uint(len(v.peaks)) {
					v.peaks[ev.Variable] = max(v.peaks[ev.Variable], math.Abs(ev.Value))
				}
			}
		}
		for x, p := range v.peaks {
			if p > 0 && !math.IsInf(p, 0) {
				v.peaks[x] = 1 / p
			} else {
				v.peaks[x] = 0
			}
		}
	})
	return v.peaks
}

// add integrates the variables of resource r into accs.
func (v *Values) add(r int, accs []*accumulator) error {
	if r >= len(v.Events) {
		return nil
	}
	scale := v.scales()
	for _, ev := range v.Events[r] {
		if uint(ev.Variable) >= uint(len(scale)) {
			return fmt.Errorf("piece of variable %d: the source has %d variables", ev.Variable, len(scale))
		}
		if ev.End < ev.Start {
			return fmt.Errorf("piece of variable %s ends (%d ns) before it starts (%d ns)", v.Variables[ev.Variable], ev.End, ev.Start)
		}
		w := ev.Value * scale[ev.Variable]
		for _, a := range accs {
			a.addValue(ev.Variable, ev.Start, ev.End, w)
		}
	}
	return nil
}

// addValue adds w times the part of [s, e) in each slice to variable x:
// the integral of a piece of value w.
func (a *accumulator) addValue(x int, s, e int64, w float64) {
	b := a.bounds
	nt := len(b) - 1
	s, e = max(s, b[0]), min(e, b[nt])
	if e <= s || w == 0 {
		return
	}
	for t := a.locate(s); t < nt && b[t] < e; t++ {
		d := min(e, b[t+1]) - max(s, b[t])
		a.row[t*a.nx+x] += int64(math.Round(w * float64(d)))
	}
}
