package embedded

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/parentrag/parentrag/internal/index"
)

// hnswGraph is a Hierarchical Navigable Small World graph (Malkov and
// Yashunin) over the rows of a flatIndex, scored by the store's metric
// (higher is better). Nodes are dense rows, inserted in row order; rows of
// tombstoned records stay in the graph as waypoints and are filtered from
// results. Insertion runs under the store's write lock, search under its read
// lock; the graph is not persisted and is rebuilt on load and compaction.
type hnswGraph struct {
	vecs    *flatIndex
	metric  index.Metric
	m, m0   int // max neighbours per node above layer 0, and on layer 0
	efC     int
	mult    float64
	rng     *rand.Rand
	links   [][][]uint32 // node -> layer -> neighbours
	entry   uint32
	top     int // layer of the entry point; -1 while empty
	visited sync.Pool
}

// scored is a graph node with its score against the current query.
type scored struct {
	sim  float32
	node uint32
}

func newHNSWGraph(vecs *flatIndex, o Options) *hnswGraph {
	return &hnswGraph{
		vecs:   vecs,
		metric: o.Metric,
		m:      o.HNSWM,
		m0:     2 * o.HNSWM,
		efC:    o.HNSWEfConstruction,
		mult:   1 / math.Log(float64(o.HNSWM)),
		rng:    rand.New(rand.NewPCG(0x9e3779b97f4a7c15, 0x2545f4914f6cdd1d)),
		top:    -1,
	}
}

func (g *hnswGraph) sim(q []float32, node uint32) scored {
	return scored{sim: g.vecs.score(q, node, g.metric), node: node}
}

func (g *hnswGraph) level() int {
	return min(int(-math.Log(1-g.rng.Float64())*g.mult), 24)
}

// insert adds row node, which must be the next row (node == len(links)).
func (g *hnswGraph) insert(node uint32) {
	q := g.vecs.row(node)
	lvl := g.level()
	g.links = append(g.links, make([][]uint32, lvl+1))
	if g.top < 0 {
		g.entry, g.top = node, lvl
		return
	}
	ep := g.sim(q, g.entry)
	for l := g.top; l > lvl; l-- {
		ep = g.greedy(q, ep, l)
	}
	eps := []scored{ep}
	for l := min(lvl, g.top); l >= 0; l-- {
		res := g.searchLayer(q, eps, g.efC, l)
		neigh := g.selectNeighbors(res, g.m)
		g.links[node][l] = neigh
		for _, nb := range neigh {
			g.connect(nb, node, l)
		}
		eps = res
	}
	if lvl > g.top {
		g.entry, g.top = node, lvl
	}
}

// connect adds a back edge from nb to node on layer l, pruning nb's list
// with the selection heuristic when it overflows.
func (g *hnswGraph) connect(nb, node uint32, l int) {
	limit := g.m
	if l == 0 {
		limit = g.m0
	}
	list := append(g.links[nb][l], node)
	if len(list) > limit {
		base := g.vecs.row(nb)
		cands := make([]scored, len(list))
		for i, x := range list {
			cands[i] = g.sim(base, x)
		}
		list = g.selectNeighbors(cands, limit)
	}
	g.links[nb][l] = list
}

// selectNeighbors keeps up to m candidates, best first, skipping any that is
// closer to an already kept neighbour than to the base: the HNSW heuristic
// that keeps the graph navigable across clusters.
func (g *hnswGraph) selectNeighbors(cands []scored, m int) []uint32 {
	slices.SortFunc(cands, func(a, b scored) int {
		switch {
		case a.sim > b.sim:
			return -1
		case a.sim < b.sim:
			return 1
		}
		return int(a.node) - int(b.node)
	})
	out := make([]uint32, 0, m)
	for _, c := range cands {
		if len(out) == m {
			break
		}
		row := g.vecs.row(c.node)
		keep := true
		for _, o := range out {
			if g.vecs.score(row, o, g.metric) > c.sim {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c.node)
		}
	}
	return out
}

// greedy walks layer l from ep to a local optimum for q.
func (g *hnswGraph) greedy(q []float32, ep scored, l int) scored {
	for changed := true; changed; {
		changed = false
		for _, nb := range g.links[ep.node][l] {
			if s := g.sim(q, nb); s.sim > ep.sim {
				ep, changed = s, true
			}
		}
	}
	return ep
}

// searchLayer is the beam search of width ef on layer l; it returns up to ef
// best nodes found, unordered.
func (g *hnswGraph) searchLayer(q []float32, eps []scored, ef, l int) []scored {
	vis := g.visitSet()
	defer g.visited.Put(vis)
	cand := nodeHeap{max: true}
	res := nodeHeap{}
	for _, ep := range eps {
		if vis.visit(ep.node) {
			cand.push(ep)
			res.push(ep)
		}
	}
	for len(res.items) > ef {
		res.pop()
	}
	for len(cand.items) > 0 {
		c := cand.pop()
		if len(res.items) >= ef && c.sim < res.items[0].sim {
			break
		}
		for _, nb := range g.links[c.node][l] {
			if !vis.visit(nb) {
				continue
			}
			s := g.sim(q, nb)
			if len(res.items) < ef || s.sim > res.items[0].sim {
				cand.push(s)
				res.push(s)
				if len(res.items) > ef {
					res.pop()
				}
			}
		}
	}
	return res.items
}

// search offers the approximate nearest live rows of q to h, with a beam of
// at least ef and at least h.k.
func (g *hnswGraph) search(q []float32, h *topK, ef int) {
	if g.top < 0 {
		return
	}
	ep := g.sim(q, g.entry)
	for l := g.top; l > 0; l-- {
		ep = g.greedy(q, ep, l)
	}
	for _, r := range g.searchLayer(q, []scored{ep}, max(ef, h.k), 0) {
		h.offer(r.sim, g.vecs.owner[r.node])
	}
}

func (g *hnswGraph) visitSet() *visitSet {
	v, _ := g.visited.Get().(*visitSet)
	if v == nil {
		v = &visitSet{}
	}
	v.reset(len(g.links))
	return v
}

func (g *hnswGraph) memory() int64 {
	mem := 24 * int64(cap(g.links))
	for _, layers := range g.links {
		mem += 24 * int64(cap(layers))
		for _, l := range layers {
			mem += 4 * int64(cap(l))
		}
	}
	return mem
}

// visitSet marks visited nodes with a generation stamp, so clearing is O(1).
type visitSet struct {
	stamp []uint32
	gen   uint32
}

func (v *visitSet) reset(n int) {
	if len(v.stamp) < n {
		v.stamp = make([]uint32, n+n/4)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.stamp)
		v.gen = 1
	}
}

// visit marks node and reports whether it was unvisited.
func (v *visitSet) visit(node uint32) bool {
	if v.stamp[node] == v.gen {
		return false
	}
	v.stamp[node] = v.gen
	return true
}

// nodeHeap is a binary heap of scored nodes: a min-heap by default (root is
// the worst), a max-heap (root is the best) when max is set. It is its own
// heap, not package heaps', because a graph search pushes and pops a node
// per neighbour it scores: with the shared heap's comparison, called
// through a function value, BenchmarkDenseHNSWSearch took 11% longer at
// the median (two runs side by side).
type nodeHeap struct {
	items []scored
	max   bool
}

func (h *nodeHeap) before(a, b scored) bool {
	if h.max {
		return a.sim > b.sim
	}
	return a.sim < b.sim
}

func (h *nodeHeap) push(s scored) {
	h.items = append(h.items, s)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.before(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *nodeHeap) pop() scored {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	for i := 0; ; {
		m := i
		if l := 2*i + 1; l < last && h.before(h.items[l], h.items[m]) {
			m = l
		}
		if r := 2*i + 2; r < last && h.before(h.items[r], h.items[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}
