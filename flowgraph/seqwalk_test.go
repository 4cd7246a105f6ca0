package flowgraph_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpiflow/flowgraph"
	"mpiflow/flowgraph/flowgen"
)

// machine is a random deterministic machine for WalkSeqs: next[s][i] and
// counter[s][i] for state s (start -1 is state 0 of the tables) and input i.
type machine struct {
	next, counter [][]int
	ncounters     int
	calls         int
}

func newMachine(r *rand.Rand, states, inputs, ncounters int) *machine {
	m := &machine{ncounters: ncounters}
	for range states {
		nx, ct := make([]int, inputs), make([]int, inputs)
		for i := range inputs {
			nx[i] = r.IntN(states)
			ct[i] = r.IntN(ncounters+1) - 1
		}
		m.next = append(m.next, nx)
		m.counter = append(m.counter, ct)
	}
	return m
}

// newAttribution returns the machine of loops.attributeIterations over
// inputs that are entries (a random half) or back edges: the state is the
// latest entry, and each input counts for it.
func newAttribution(r *rand.Rand, inputs int) *machine {
	m := &machine{ncounters: inputs}
	for s := range inputs {
		nx, ct := make([]int, inputs), make([]int, inputs)
		for i := range inputs {
			nx[i], ct[i] = s, s
			if r.IntN(2) == 0 {
				nx[i], ct[i] = i, i
			}
		}
		m.next = append(m.next, nx)
		m.counter = append(m.counter, ct)
	}
	return m
}

func (m *machine) step(s, i int) (int, int) {
	m.calls++
	return m.next[s][i], m.counter[s][i]
}

// walkReference is WalkSeqs by expansion: every number of every sequence,
// sorted, fed one at a time.
func walkReference(seqs []*flowgraph.Seq, ncounters, start int, step func(int, int) (int, int)) ([]int64, int) {
	type ev struct {
		n int64
		i int
	}
	var evs []ev
	for i, s := range seqs {
		s.All(func(n int64) bool {
			evs = append(evs, ev{n, i})
			return true
		})
	}
	slices.SortFunc(evs, func(a, b ev) int { return int(a.n - b.n) })
	counts := make([]int64, ncounters)
	state := start
	for _, e := range evs {
		var k int
		state, k = step(state, e.i)
		if k >= 0 {
			counts[k]++
		}
	}
	return counts, state
}

// program is a random loop nest over labelled events: a statement is an
// event of a label (-1: an event of no sequence), a loop over a body, or a
// body run only every period-th time it is reached.
type program struct {
	label  int
	iters  int // > 0: a loop; iterations drawn from [iters-jitter, iters]
	jitter int
	period int // > 0: a branch taken every period-th time
	seen   int
	body   []*program
}

func randomProgram(r *rand.Rand, depth, labels, maxIters int) *program {
	p := &program{iters: 1 + r.IntN(maxIters)}
	if r.IntN(4) == 0 {
		p.jitter = r.IntN(p.iters)
	}
	for range 1 + r.IntN(4) {
		switch k := r.IntN(6); {
		case k < 2 && depth > 0:
			p.body = append(p.body, randomProgram(r, depth-1, labels, maxIters))
		case k == 2 && depth > 0:
			b := randomProgram(r, depth-1, labels, 3)
			b.iters, b.jitter, b.period = 1, 0, 2+r.IntN(3)
			p.body = append(p.body, b)
		default:
			p.body = append(p.body, &program{label: r.IntN(labels+1) - 1})
		}
	}
	return p
}

// exec appends the program's events to seqs, numbering them from *n on.
func (p *program) exec(r *rand.Rand, seqs []flowgraph.Seq, n *int64) {
	if p.iters == 0 {
		if p.label >= 0 {
			seqs[p.label].Append(*n)
		}
		*n++
		return
	}
	if p.period > 0 {
		p.seen++
		if p.seen%p.period != 0 {
			return
		}
	}
	it := p.iters
	if p.jitter > 0 {
		it -= r.IntN(p.jitter + 1)
	}
	for range it {
		for _, b := range p.body {
			b.exec(r, seqs, n)
		}
	}
}

func ptrs(seqs []flowgraph.Seq) []*flowgraph.Seq {
	out := make([]*flowgraph.Seq, len(seqs))
	for i := range seqs {
		out[i] = &seqs[i]
	}
	return out
}

// TestWalkSeqsMatchesExpansion compares WalkSeqs with the expanding
// reference on random loop nests and on the edges of generated programs,
// with random machines.
func TestWalkSeqsMatchesExpansion(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 17))
	type tc struct {
		name string
		seqs []*flowgraph.Seq
	}
	var cases []tc
	for k := range 200 {
		labels := 1 + r.IntN(5)
		p := randomProgram(r, 1+r.IntN(3), labels, 1+r.IntN(40))
		seqs := make([]flowgraph.Seq, labels)
		n := int64(1 + r.IntN(3))
		for range 1 + r.IntN(3) {
			if n < 100_000 {
				p.exec(r, seqs, &n)
			}
		}
		cases = append(cases, tc{fmt.Sprintf("nest %d", k), ptrs(seqs)})
	}
	for seed := uint64(1); seed <= 20; seed++ {
		p := flowgen.New(flowgen.Options{Seed: seed, Events: 20000, Depth: 1 + int(seed%4), Sites: 4 + int(seed%9), Branchy: seed%2 == 0})
		b := p.NewBuilder()
		p.Execute(0, b.Add)
		g := b.Graph()
		var seqs []*flowgraph.Seq
		for _, i := range r.Perm(len(g.Edges))[:min(len(g.Edges), 1+r.IntN(8))] {
			seqs = append(seqs, &g.Edges[i].Seq)
		}
		cases = append(cases, tc{fmt.Sprintf("flowgen %d", seed), seqs})
	}
	cases = append(cases, tc{"none", nil}, tc{"empty", []*flowgraph.Seq{{}, {}}})
	for _, c := range cases {
		inputs := max(len(c.seqs), 1)
		states := 1 + r.IntN(4)
		// A random machine seldom comes back to the same state after
		// two periods, and then nothing is skipped; the attribution
		// machine always does.
		for _, m := range []*machine{newMachine(r, states, inputs, 1+r.IntN(4)), newAttribution(r, inputs)} {
			start := r.IntN(len(m.next))
			want, wantState := walkReference(c.seqs, m.ncounters, start, m.step)
			got, gotState := flowgraph.WalkSeqs(c.seqs, m.ncounters, start, m.step)
			require.Equal(t, want, got, c.name)
			require.Equal(t, wantState, gotState, c.name)
		}
	}
}

// TestWalkSeqsSkipsRepeats checks that periodic sequences cost a number of
// steps that does not depend on their length: the machine is called for
// a few periods at each level of a loop nest, not for every number.
func TestWalkSeqsSkipsRepeats(t *testing.T) {
	tests := []struct {
		name     string
		iters    []int // a loop nest, outermost first
		maxCalls int
	}{
		{"poll 10^6", []int{1_000_000}, 100},
		{"two levels", []int{1000, 1000}, 500},
		{"three levels", []int{100, 100, 100}, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Innermost: "A B" with "C" every third pass; each level
			// adds an event of its own after its inner loop.
			seqs := make([]flowgraph.Seq, 3+len(tt.iters))
			n := int64(1)
			var nest func(level int)
			nest = func(level int) {
				if level == len(tt.iters) {
					return
				}
				for i := range tt.iters[level] {
					if level == len(tt.iters)-1 {
						seqs[0].Append(n)
						seqs[1].Append(n + 1)
						n += 2
						if i%3 == 2 {
							seqs[2].Append(n)
							n++
						}
						continue
					}
					nest(level + 1)
					seqs[3+level].Append(n)
					n++
				}
			}
			nest(0)
			// The attribution of loops.attributeIterations: inputs 0
			// and 2 are entries, 1 counts for the latest entry.
			m := &machine{}
			step := func(s, i int) (int, int) {
				m.calls++
				switch i {
				case 0, 2:
					return i, i
				case 1:
					return s, s
				}
				return s, -1
			}
			counts, _ := flowgraph.WalkSeqs(ptrs(seqs), 3, -1, step)
			var passes int64 = 1
			for _, it := range tt.iters {
				passes *= int64(it)
			}
			inner := int64(tt.iters[len(tt.iters)-1])
			// B always follows A: A's iterations are its own and B's.
			assert.Equal(t, []int64{2 * passes, 0, passes / inner * (inner / 3)}, counts)
			assert.Less(t, m.calls, tt.maxCalls, "steps")
		})
	}
}

// BenchmarkWalkSeqsPoll attributes the iterations of the self-loop of
// MPI_Test in a polling loop of 10^7 passes (an MPI_Test every pass, an
// MPI_Testany every third; loops.attributeIterations): entries from
// MPI_Testany, back edges MPI_Test->MPI_Test. It takes microseconds, as
// for 10^3 passes.
func BenchmarkWalkSeqsPoll(b *testing.B) {
	for _, passes := range []int64{1e3, 1e7} {
		// Events T T T A repeated: T->T at 4k+1 and 4k+2, A->T at 4k+4.
		var testany, back flowgraph.Seq
		for k := range passes / 3 {
			back.Append(4*k + 1)
			back.Append(4*k + 2)
			testany.Append(4*k + 4)
		}
		seqs := []*flowgraph.Seq{&testany, &back}
		step := func(s, i int) (int, int) {
			if i == 0 {
				return 0, 0
			}
			return s, s
		}
		b.Run(fmt.Sprint(passes), func(b *testing.B) {
			for b.Loop() {
				flowgraph.WalkSeqs(seqs, 1, -1, step)
			}
		})
	}
}
