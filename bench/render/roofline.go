package render

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/internal/term"
	"github.com/prism-compute/prism/engine"
)

// A roofline chart places each case of one device at its arithmetic intensity (FLOPs per
// byte moved, from the op's model) and its achieved GFLOP/s, under the device's roofs
// measured in the same run: copy bandwidth x intensity (the slope) and the compute peaks
// (flat: fp32 solid; fp64 and the tensor peaks of the arithmetics of the cases on the
// chart, tf32, fp16, bf16, fp8 or fp64 DMMA, dashed). Cases whose model does no FLOPs
// (copies, sorts, histograms, max/argmin reductions) have no intensity and no place on it:
// they are left out and listed under the chart; the bar chart shows their bandwidth
// against the copy ceiling.

// rooflinePoint is one case on a roofline.
type rooflinePoint struct {
	n         int // its number on the chart and in the key
	label     string
	family    int // index into the chart's families, for the colour
	ai, gflop float64
}

// maxRooflinePoints bounds the cases on one roofline: each point's label is placed clear of
// the others, work that grows with the square of the points, and a few hundred numbered
// points are already more than a reader can follow.
const maxRooflinePoints = 400

const (
	rooflinePlotH = vg.Length(480)
	rooflineAxisW = vg.Length(58) // the y tick labels and the axis title
	rooflineAxisH = vg.Length(40)
	pointRadius   = vg.Length(3.4)
)

var (
	pointLabelStyle = textStyle(8.5, true, colorText)
	roofLabelStyle  = textStyle(9, false, colorText)
	keyStyle        = textStyle(8.5, false, colorText)
)

// rooflineChart lays out the roofline of device d, or returns an error when the device has
// no measured ceilings or no case with FLOPs.
func (r view) rooflineChart(d int) (*chart, error) {
	dr := &r.Devices[d]
	cl := dr.Ceilings
	if cl.CopyGBs <= 0 {
		return nil, fmt.Errorf("bench: %s has no measured ceilings: %w", dr.Device.ID, engine.ErrInvalidArg)
	}
	multiSize := len(r.sizes()) > 1
	var pts []rooflinePoint
	var families, noFlops, types []string
	famIndex := map[string]int{}
	for _, res := range dr.Results {
		if !res.OK() || res.Latency() {
			continue // a latency has neither FLOPs nor bytes, nor a place under the roofs
		}
		label := res.Case
		if multiSize {
			label += " " + bench.SizeText(res.Size, res.Dims)
		}
		if res.Flops <= 0 || res.Bytes <= 0 || res.GFLOPs <= 0 {
			if res.Link {
				noFlops = append(noFlops, fmt.Sprintf("%s (%s GB/s over the host link)", label, term.Float(res.GBs)))
			} else {
				noFlops = append(noFlops, fmt.Sprintf("%s (%.0f%% of copy)", label, 100*res.Fraction))
			}
			continue
		}
		if ai := res.Flops / res.Bytes; !onLogAxis(ai) || !onLogAxis(res.GFLOPs) {
			continue // figures no log axis can hold (a hand-edited report): left out
		}
		fam := res.Family
		if fam == "" {
			fam, _, _ = strings.Cut(res.Case, "/")
		}
		if _, ok := famIndex[fam]; !ok {
			famIndex[fam] = len(families)
			families = append(families, fam)
		}
		pts = append(pts, rooflinePoint{n: len(pts) + 1, label: label, family: famIndex[fam], ai: res.Flops / res.Bytes, gflop: res.GFLOPs})
		types = append(types, res.Type)
	}
	switch {
	case len(pts) == 0:
		return nil, fmt.Errorf("bench: %s has no timed case with FLOPs to place on a roofline: %w", dr.Device.ID, engine.ErrInvalidArg)
	case len(pts) > maxRooflinePoints:
		return nil, fmt.Errorf("bench: %s has %d cases with FLOPs, more than one roofline shows (%d): %w", dr.Device.ID, len(pts), maxRooflinePoints, engine.ErrInvalidArg)
	}

	type roof struct {
		name   string
		gflops float64
		dashed bool
	}
	roofs := []roof{{"fp32", cl.FP32GFLOPs, false}}
	if cl.FP64GFLOPs > 0 {
		roofs = append(roofs, roof{"fp64", cl.FP64GFLOPs, true})
	}
	// The roofs of the other arithmetics of the cases on the chart: the tensor peaks (tf32,
	// fp16, ...) and the fp64 tensor peak where it beats the FMA one, each once.
	for _, typ := range types {
		name, g := cl.PeakName(typ), cl.PeakGFLOPs(typ)
		if g <= 0 || name == "fp32" || name == "fp64" || slices.ContainsFunc(roofs, func(r roof) bool { return r.name == name }) {
			continue
		}
		roofs = append(roofs, roof{name, g, true})
	}
	xlo, xhi := math.Inf(1), 0.0
	ylo, yhi := math.Inf(1), 0.0
	for _, p := range pts {
		xlo, xhi = math.Min(xlo, p.ai), math.Max(xhi, p.ai)
		ylo, yhi = math.Min(ylo, p.gflop), math.Max(yhi, p.gflop)
	}
	for _, rf := range roofs {
		if rf.gflops > 0 {
			ridge := rf.gflops / cl.CopyGBs
			xlo, xhi = math.Min(xlo, ridge), math.Max(xhi, ridge)
			yhi = math.Max(yhi, rf.gflops)
		}
	}
	// Decades around the data, with room above the peaks for their labels.
	xs := axisScale{min: decadeBelow(xlo), max: decadeAbove(xhi * 1.5), log: true, format: siFormat}
	ys := axisScale{min: niceBelow(ylo / 1.3), max: decadeAbove(yhi * 1.4), log: true, format: siFormat}
	if !xs.usable() || !ys.usable() {
		return nil, fmt.Errorf("bench: %s: the ceilings and cases span %g to %g FLOP/byte and %g to %g GFLOP/s, beyond what a roofline can draw: %w",
			dr.Device.ID, xlo, xhi, ylo, yhi, engine.ErrInvalidArg)
	}

	name := dr.Device.ID
	if dr.Device.Name != "" {
		name += " · " + dr.Device.Name
	}
	ceil := fmt.Sprintf("copy %s GB/s, fp32 peak %s GFLOP/s", term.Float(cl.CopyGBs), term.Float(cl.FP32GFLOPs))
	for _, rf := range roofs[1:] {
		if rf.gflops > 0 {
			ceil += fmt.Sprintf(", %s peak %s GFLOP/s", rf.name, term.Float(rf.gflops))
		}
	}
	h := &header{title: "Roofline: " + name, subtitle: r.runLine()}
	for i, f := range families {
		h.legend = append(h.legend, legendEntry{familyColors[i%len(familyColors)], f})
	}
	inner := chartWidth - 2*chartMargin

	// The key: "12 gemm/nn/float32" in columns, numbered down each column.
	keyW := vg.Length(0)
	for _, p := range pts {
		keyW = max(keyW, keyStyle.Width(fmt.Sprintf("%d  %s", p.n, p.label)))
	}
	keyW += 10 + 16
	cols := max(1, min(5, int(inner/keyW)))
	keyRows := (len(pts) + cols - 1) / cols
	colW := inner / vg.Length(cols)

	var notes []string
	notes = append(notes, "Ceilings measured on this device in the same run: "+ceil+". Points: achieved GFLOP/s at the case's FLOP/byte (the op's model of its work); the key numbers them.")
	if len(noFlops) > 0 {
		notes = append(notes, fmt.Sprintf("Not on the chart, no FLOPs in the model (%d): %s. Their bandwidth is in the bar chart.", len(noFlops), strings.Join(noFlops, ", ")))
	}
	var noteLines []string
	for _, n := range notes {
		noteLines = append(noteLines, wrapText(noteStyle, n, inner)...)
	}

	headerH := h.height(inner)
	ch := &chart{w: chartWidth}
	ch.h = chartMargin + headerH + 8 + rooflinePlotH + rooflineAxisH + 8 + vg.Length(keyRows)*13 + 8 + vg.Length(len(noteLines))*12 + chartMargin

	ch.draw = func(c draw.Canvas) {
		left := c.Min.X + chartMargin
		h.draw(c, left, inner)
		px0, px1 := left+rooflineAxisW, c.Min.X+chartWidth-chartMargin-8
		py1 := c.Max.Y - chartMargin - headerH - 8
		py0 := py1 - rooflinePlotH
		xs.lo, xs.hi, ys.lo, ys.hi = px0, px1, py0, py1

		// Grid and ticks.
		xmaj, xmin := xs.ticks()
		ymaj, ymin := ys.ticks()
		for _, t := range xmin {
			line(c, colorMinor, 0.5, nil, vg.Point{X: xs.at(t.v), Y: py0}, vg.Point{X: xs.at(t.v), Y: py1})
		}
		for _, t := range ymin {
			line(c, colorMinor, 0.5, nil, vg.Point{X: px0, Y: ys.at(t.v)}, vg.Point{X: px1, Y: ys.at(t.v)})
		}
		for _, t := range xmaj {
			x := xs.at(t.v)
			line(c, colorGrid, 0.7, nil, vg.Point{X: x, Y: py0}, vg.Point{X: x, Y: py1})
			c.FillText(aligned(tickStyle, text.XCenter, text.YTop), vg.Point{X: x, Y: py0 - 4}, t.label)
		}
		for _, t := range ymaj {
			y := ys.at(t.v)
			line(c, colorGrid, 0.7, nil, vg.Point{X: px0, Y: y}, vg.Point{X: px1, Y: y})
			c.FillText(aligned(tickStyle, text.XRight, text.YCenter), vg.Point{X: px0 - 4, Y: y}, t.label)
		}
		line(c, colorAxis, 0.8, nil, vg.Point{X: px0, Y: py1}, vg.Point{X: px0, Y: py0}, vg.Point{X: px1, Y: py0})
		c.FillText(aligned(labelStyle, text.XCenter, text.YTop), vg.Point{X: (px0 + px1) / 2, Y: py0 - 18}, "arithmetic intensity (FLOP/byte, log scale)")
		ylab := aligned(labelStyle, text.XCenter, text.YTop)
		ylab.Rotation = math.Pi / 2
		c.FillText(ylab, vg.Point{X: left, Y: (py0 + py1) / 2}, "GFLOP/s (log scale)")

		// The roofs: the copy slope up to each peak, then the peak. Rectangles that labels
		// must avoid collect in taken.
		var taken []vg.Rectangle
		clipX := func(x float64) float64 { return math.Min(math.Max(x, xs.min), xs.max) }
		slopeStart := clipX(math.Max(xs.min, ys.min/cl.CopyGBs))
		for i, rf := range roofs {
			if rf.gflops <= 0 {
				continue
			}
			ridge := clipX(rf.gflops / cl.CopyGBs)
			var dashes []vg.Length
			width := vg.Length(1.8)
			if rf.dashed {
				dashes, width = []vg.Length{5, 3}, 1.3
			}
			roofLine := []vg.Point{{X: xs.at(slopeStart), Y: ys.at(cl.CopyGBs * slopeStart)}, {X: xs.at(ridge), Y: ys.at(rf.gflops)}, {X: px1, Y: ys.at(rf.gflops)}}
			if i > 0 {
				roofLine = roofLine[1:] // the slope is drawn once
			}
			line(c, colorText, width, dashes, roofLine...)
			// The peak's label sits at the right end, above its line, or below when the
			// other roof is too close above.
			lbl := fmt.Sprintf("%s peak %s GFLOP/s", rf.name, term.Float(rf.gflops))
			y, ya := ys.at(rf.gflops)+3, text.YBottom
			if i > 0 && ys.at(roofs[0].gflops)-ys.at(rf.gflops) < 16 {
				y, ya = ys.at(rf.gflops)-3, text.YTop
			}
			// Below its line where the label would cover another roof's.
			if rc := textRect(aligned(roofLabelStyle, text.XRight, ya), vg.Point{X: px1 - 4, Y: y}, lbl); i > 0 && ya == text.YBottom &&
				slices.ContainsFunc(taken, func(t vg.Rectangle) bool { return overlap(rc, t) > 0 }) {
				y, ya = ys.at(rf.gflops)-3, text.YTop
			}
			sty := aligned(roofLabelStyle, text.XRight, ya)
			c.FillText(sty, vg.Point{X: px1 - 4, Y: y}, lbl)
			taken = append(taken, textRect(sty, vg.Point{X: px1 - 4, Y: y}, lbl))
		}
		// The slope's label, along the line above it, past the crowd of memory-bound cases
		// at its foot.
		{
			ridge := clipX(roofs[0].gflops / cl.CopyGBs)
			if roofs[0].gflops <= 0 {
				ridge = xs.max
			}
			ax := math.Pow(10, math.Log10(slopeStart)+(math.Log10(ridge)-math.Log10(slopeStart))*0.55)
			p0 := vg.Point{X: xs.at(slopeStart), Y: ys.at(cl.CopyGBs * slopeStart)}
			p1 := vg.Point{X: xs.at(ridge), Y: ys.at(cl.CopyGBs * ridge)}
			sty := aligned(roofLabelStyle, text.XLeft, text.YBottom)
			sty.Rotation = math.Atan2(float64(p1.Y-p0.Y), float64(p1.X-p0.X))
			at := vg.Point{X: xs.at(ax) - 2, Y: ys.at(cl.CopyGBs*ax) + 4}
			lbl := fmt.Sprintf("copy %s GB/s × FLOP/byte", term.Float(cl.CopyGBs))
			c.FillText(sty, at, lbl)
			// Approximate the rotated label by boxes along it.
			w := roofLabelStyle.Width(lbl)
			for f := vg.Length(0); f < w; f += 10 {
				cx := at.X + f*vg.Length(math.Cos(sty.Rotation))
				cy := at.Y + f*vg.Length(math.Sin(sty.Rotation))
				taken = append(taken, vg.Rectangle{Min: vg.Point{X: cx - 6, Y: cy}, Max: vg.Point{X: cx + 6, Y: cy + 11}})
			}
		}

		// Points, then their numbers where they collide with nothing.
		at := make([]vg.Point, len(pts))
		for i, p := range pts {
			at[i] = vg.Point{X: xs.at(p.ai), Y: ys.at(p.gflop)}
			taken = append(taken, vg.Rectangle{Min: vg.Point{X: at[i].X - pointRadius, Y: at[i].Y - pointRadius}, Max: vg.Point{X: at[i].X + pointRadius, Y: at[i].Y + pointRadius}})
		}
		for i, p := range pts {
			col := familyColors[p.family%len(familyColors)]
			c.DrawGlyph(draw.GlyphStyle{Color: color.White, Radius: pointRadius + 0.9, Shape: draw.CircleGlyph{}}, at[i])
			c.DrawGlyph(draw.GlyphStyle{Color: col, Radius: pointRadius, Shape: draw.CircleGlyph{}}, at[i])
		}
		plotRect := vg.Rectangle{Min: vg.Point{X: px0, Y: py0}, Max: vg.Point{X: px1, Y: py1}}
		for i, p := range pts {
			lbl := strconv.Itoa(p.n)
			pos, sty, far := placeLabel(at[i], lbl, taken, plotRect)
			rc := textRect(sty, pos, lbl)
			if far {
				// A leader from the point's edge to the nearest point of the label.
				to := vg.Point{X: min(max(at[i].X, rc.Min.X), rc.Max.X), Y: min(max(at[i].Y, rc.Min.Y), rc.Max.Y)}
				dx, dy := float64(to.X-at[i].X), float64(to.Y-at[i].Y)
				if l := math.Hypot(dx, dy); l > float64(pointRadius)+1 {
					from := vg.Point{X: at[i].X + vg.Length(dx/l)*pointRadius, Y: at[i].Y + vg.Length(dy/l)*pointRadius}
					line(c, colorMuted, 0.5, nil, from, to)
				}
			}
			c.FillText(sty, pos, lbl)
			taken = append(taken, rc)
		}

		// The key and the notes.
		ky := py0 - rooflineAxisH - 8
		for i, p := range pts {
			col, row := i/keyRows, i%keyRows
			x := left + vg.Length(col)*colW
			y := ky - vg.Length(row)*13
			c.DrawGlyph(draw.GlyphStyle{Color: familyColors[p.family%len(familyColors)], Radius: 3.2, Shape: draw.CircleGlyph{}}, vg.Point{X: x + 4, Y: y - 5})
			c.FillText(aligned(textStyle(8.5, true, colorText), text.XRight, text.YTop), vg.Point{X: x + 26, Y: y}, strconv.Itoa(p.n))
			c.FillText(aligned(keyStyle, text.XLeft, text.YTop), vg.Point{X: x + 30, Y: y}, p.label)
		}
		ny := ky - vg.Length(keyRows)*13 - 8
		for _, l := range noteLines {
			c.FillText(aligned(noteStyle, text.XLeft, text.YTop), vg.Point{X: left, Y: ny}, l)
			ny -= 12
		}
	}
	return ch, nil
}

// textRect returns the box a text drawn at pt in sty covers (rotation ignored).
func textRect(sty text.Style, pt vg.Point, s string) vg.Rectangle {
	w, h := sty.Width(s), sty.Height(s)
	x := pt.X + vg.Length(sty.XAlign)*w
	y := pt.Y + vg.Length(sty.YAlign)*h
	return vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + w, Y: y + h}}
}

func overlap(a, b vg.Rectangle) vg.Length {
	w := min(a.Max.X, b.Max.X) - max(a.Min.X, b.Min.X)
	h := min(a.Max.Y, b.Max.Y) - max(a.Min.Y, b.Min.Y)
	if w <= 0 || h <= 0 {
		return 0
	}
	return w * h
}

// placeLabel puts a point's label beside it: the first position, on rings farther and
// farther out and around each ring, that overlaps nothing taken and stays inside bounds;
// else the position that overlaps least. far says the label is off the first ring, where
// a leader line should join it to its point.
func placeLabel(pt vg.Point, s string, taken []vg.Rectangle, bounds vg.Rectangle) (pos vg.Point, sty text.Style, far bool) {
	best := vg.Length(math.Inf(1))
	// Until a position costs less, the first one (right of the point).
	pos, sty = vg.Point{X: pt.X + pointRadius + 1.5, Y: pt.Y}, aligned(pointLabelStyle, text.XLeft, text.YCenter)
	for ring, d := range []vg.Length{pointRadius + 1.5, pointRadius + 10, pointRadius + 20, pointRadius + 32, pointRadius + 46} {
		dirs := 8
		if ring > 0 {
			dirs = 16
		}
		for k := range dirs {
			// Right first, then left, above, below, then the diagonals.
			a := [...]float64{0, 4, 2, 6, 1, 3, 7, 5, 0.5, 3.5, 1.5, 2.5, 4.5, 7.5, 5.5, 6.5}[k] * math.Pi / 4
			if ring == 0 {
				a = [...]float64{0, 4, 2, 6, 1, 3, 7, 5}[k] * math.Pi / 4
			}
			dx, dy := math.Cos(a), math.Sin(a)
			xa, ya := text.XCenter, text.YCenter
			switch {
			case dx > 0.3:
				xa = text.XLeft
			case dx < -0.3:
				xa = text.XRight
			}
			switch {
			case dy > 0.3:
				ya = text.YBottom
			case dy < -0.3:
				ya = text.YTop
			}
			c := aligned(pointLabelStyle, xa, ya)
			p := vg.Point{X: pt.X + d*vg.Length(dx), Y: pt.Y + d*vg.Length(dy)}
			rc := textRect(c, p, s)
			cost := vg.Length(ring) * 0.01 // prefer near rings among equals
			if rc.Min.X < bounds.Min.X || rc.Max.X > bounds.Max.X || rc.Min.Y < bounds.Min.Y || rc.Max.Y > bounds.Max.Y {
				cost += 1e6
			}
			for _, t := range taken {
				cost += overlap(rc, t)
			}
			if cost < 0.5 {
				return p, c, ring > 0
			}
			if cost < best {
				best, pos, sty, far = cost, p, c, ring > 0
			}
		}
	}
	return pos, sty, far
}

// onLogAxis reports whether v can sit on a log axis with room for the decades around it.
func onLogAxis(v float64) bool { return v >= 1e-200 && v <= 1e200 }

// rooflineCharts returns the roofline of every device that has one, and a note for each
// device left out.
func (r view) rooflineCharts() (charts []*chart, ids []string, skipped []string) {
	for i := range r.Devices {
		ch, err := r.rooflineChart(i)
		if err != nil {
			skipped = append(skipped, strings.TrimPrefix(err.Error(), "bench: "))
			continue
		}
		charts = append(charts, ch)
		ids = append(ids, r.Devices[i].Device.ID)
	}
	return charts, ids, skipped
}

// Roofline writes the roofline charts of the report's devices in format (see
// PlotFormats) to w, one below the other in one image, each with its key of cases. Devices
// without measured ceilings or cases with FLOPs are left out; with none left it is an error.
func Roofline(w io.Writer, rep *bench.Report, format string) error {
	r := view{rep}
	charts, _, skipped := r.rooflineCharts()
	if len(charts) == 0 {
		return fmt.Errorf("bench: no device to draw a roofline for (%s): %w", strings.Join(skipped, "; "), engine.ErrInvalidArg)
	}
	return stack(charts).writeTo(w, format)
}

// SaveRoofline writes the roofline charts to path, in the format its extension names.
func SaveRoofline(path string, rep *bench.Report) error {
	r := view{rep}
	if _, err := PlotFormat(path); err != nil {
		return err
	}
	charts, _, skipped := r.rooflineCharts()
	if len(charts) == 0 {
		return fmt.Errorf("bench: no device to draw a roofline for (%s): %w", strings.Join(skipped, "; "), engine.ErrInvalidArg)
	}
	return stack(charts).save(path)
}
