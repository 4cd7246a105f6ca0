package report

import (
	"fmt"
	"math"
	"slices"

	"mpiflow/aggregate"
)

// palette holds distinct colors given to MPI calls in order of their total
// time, so the most important calls get the most distinct colors. Each is
// a hue of its own at a middle lightness (the 9 colored hues of the
// Tableau/D3 category10, then gold, teal and indigo), never a light or dark
// tint of another: the overview's transparency stands for heterogeneity,
// and a tint would read as the same state drawn transparent. It avoids
// gray, which is kept for compute phases.
var palette = [...]string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
	"#17becf", "#f0c000", "#00a087", "#3c3cc8",
}

// ComputeColor is the color of compute phases (time outside MPI).
const ComputeColor = "#d9d9d9"

// OtherColor is the color of the "other calls" bucket of charts.
const OtherColor = "#7f7f7f"

// CallColors assigns one color per name: the i-th call of calls (by
// descending time) gets the i-th palette color; then the extra names
// (such as the overview's groups of calls) and the later calls, in this
// order, each the candidate color farthest from those given before it and
// from the grays (distinctColor), so that no two names of one report look
// alike and the names besides the calls stand out most. The charts, the
// timeline and the overview all use these colors.
func CallColors(calls []string, extra ...string) map[string]string {
	m := make(map[string]string, len(calls)+len(extra))
	top := calls[:min(len(calls), len(palette))]
	var given []string
	for _, c := range slices.Concat(top, extra, calls[len(top):]) {
		if _, ok := m[c]; ok {
			continue
		}
		if len(given) < len(top) {
			m[c] = palette[len(given)]
		} else {
			m[c] = distinctColor(given)
		}
		given = append(given, m[c])
	}
	return m
}

// groupNames are the overview's groups of calls, which get colors of their
// own after the calls (CallColors).
var groupNames = []string{aggregate.GroupP2P, aggregate.GroupCollective, aggregate.GroupWait, aggregate.GroupIO, aggregate.GroupOther}

// groupLabel names group g in the overview, beside the calls of its own:
// "other p2p calls", and for the calls of no group "other calls".
func groupLabel(g string) string {
	if g == aggregate.GroupOther {
		return "other calls"
	}
	return "other " + g + " calls"
}

// isGroup tells whether state s is one of groupNames.
func isGroup(s string) bool { return slices.Contains(groupNames, s) }

// Colors of the per-rank charts' series: grays and black, which no call
// has (CPU time is mostly compute, the gray of compute phases).
const (
	UserColor    = "#525252"
	SystemColor  = "#a3a3a3"
	MPITimeColor = "#1a1a1a"
	MemoryColor  = "#6b6b6b"
)

// candidates are the colors distinctColor chooses from: hues every 10
// degrees at middle lightness and three saturations, none a gray or a
// light tint (see palette).
var candidates, candidateLabs = func() ([]string, []lab) {
	var cs []string
	var ls []lab
	for h := 0.0; h < 360; h += 10 {
		for _, sl := range [][2]float64{{0.8, 0.45}, {0.6, 0.35}, {0.55, 0.55}} {
			cs = append(cs, hslHex(h, sl[0], sl[1]))
			ls = append(ls, labOf(cs[len(cs)-1]))
		}
	}
	return cs, ls
}()

// distinctColor returns the candidate color farthest (CIE76, in L*a*b*)
// from the colors given and from ComputeColor and OtherColor: the first
// of the farthest, so that the choice is deterministic.
func distinctColor(given []string) string {
	used := []lab{labOf(ComputeColor), labOf(OtherColor)}
	for _, c := range given {
		used = append(used, labOf(c))
	}
	best, bestD := candidates[0], -1.0
	for k, c := range candidates {
		d := math.Inf(1)
		for _, u := range used {
			d = math.Min(d, candidateLabs[k].dist(u))
		}
		if d > bestD {
			best, bestD = c, d
		}
	}
	return best
}

// lab is a color in CIE L*a*b* (D65).
type lab [3]float64

func (a lab) dist(b lab) float64 { return math.Hypot(a[0]-b[0], math.Hypot(a[1]-b[1], a[2]-b[2])) }

// labOf converts "#rrggbb" (sRGB) to L*a*b*; anything else is black.
func labOf(c string) lab {
	var r, g, b int
	if _, err := fmt.Sscanf(c, "#%02x%02x%02x", &r, &g, &b); err != nil {
		return lab{}
	}
	lin := func(v int) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	rl, gl, bl := lin(r), lin(g), lin(b)
	x := (0.4124*rl + 0.3576*gl + 0.1805*bl) / 0.95047
	y := 0.2126*rl + 0.7152*gl + 0.0722*bl
	z := (0.0193*rl + 0.1192*gl + 0.9505*bl) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	fx, fy, fz := f(x), f(y), f(z)
	return lab{116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)}
}

func hslHex(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g, b = c, x, 0
	case h < 120:
		r, g, b = x, c, 0
	case h < 180:
		r, g, b = 0, c, x
	case h < 240:
		r, g, b = 0, x, c
	case h < 300:
		r, g, b = x, 0, c
	default:
		r, g, b = c, 0, x
	}
	return rgbHex((r+m)*255, (g+m)*255, (b+m)*255)
}

func rgbHex(r, g, b float64) string {
	cl := func(v float64) int { return int(math.Round(math.Max(0, math.Min(255, v)))) }
	return fmt.Sprintf("#%02x%02x%02x", cl(r), cl(g), cl(b))
}

// gradient stops of the yellow-to-red scale (ColorBrewer YlOrRd).
var gradient = [...][3]float64{{255, 255, 178}, {254, 204, 92}, {253, 141, 60}, {240, 59, 32}, {189, 0, 38}}

// Heat maps f in [0, 1] to the yellow-to-red gradient; values outside are
// clamped and NaN maps to gray.
func Heat(f float64) string {
	if math.IsNaN(f) {
		return "#eeeeee"
	}
	f = math.Max(0, math.Min(1, f))
	x := f * float64(len(gradient)-1)
	i := int(x)
	if i >= len(gradient)-1 {
		i = len(gradient) - 2
	}
	t := x - float64(i)
	a, b := gradient[i], gradient[i+1]
	return rgbHex(a[0]+(b[0]-a[0])*t, a[1]+(b[1]-a[1])*t, a[2]+(b[2]-a[2])*t)
}

// maxEdgeLuminance is the lightest an edge is drawn: a line of the light
// end of the scales (pale yellow, near-white) cannot be seen on white.
const maxEdgeLuminance = 200

// EdgeColor is the color of an edge whose place on a scale is color c
// ("#rrggbb"): c, or, when too light to see as a line on white, c mixed
// with grey (the page's script does the same).
func EdgeColor(c string) string {
	var r, g, b int
	if len(c) != 7 || c[0] != '#' {
		return c
	}
	if _, err := fmt.Sscanf(c, "#%02x%02x%02x", &r, &g, &b); err != nil || luminance(r, g, b) <= maxEdgeLuminance {
		return c
	}
	mix := func(v int) float64 { return 0.55*float64(v) + 0.45*128 }
	return rgbHex(mix(r), mix(g), mix(b))
}

// luminance is the perceived luminance (ITU-R BT.601 weights) of a color,
// 0 to 255, as the page's script computes it.
func luminance(r, g, b int) float64 { return 0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b) }

// TextColor is the color of text on background bg ("#rrggbb"): white on
// dark colors such as the red end of the gradient, black otherwise (and
// for anything that is not "#rrggbb").
func TextColor(bg string) string {
	var r, g, b int
	if len(bg) != 7 || bg[0] != '#' {
		return "#000000"
	}
	if _, err := fmt.Sscanf(bg, "#%02x%02x%02x", &r, &g, &b); err != nil {
		return "#000000"
	}
	if luminance(r, g, b) < 140 {
		return "#ffffff"
	}
	return "#000000"
}
