package agent

import (
	"container/heap"
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/dosim/dosim/internal/wire"
	"github.com/dosim/dosim/object"
)

// This file is the in-memory index of an object's stored tasks, which
// its Agent holds.

// taskIndex is the in-memory order of an object's stored tasks, per lane:
// a heap on (due, seq). It is derived from storage, dropped by an object
// reset and rebuilt from storage on next use. A heap entry is live while
// its version is the task's current one; others are skipped.
type taskIndex struct {
	st    *object.State // the State it indexes the storage of
	lanes [2]laneIndex
	ver   uint64
}

type laneIndex struct {
	heap entryHeap
	live map[uint64]uint64 // seq -> version of its live entry
	// blocker is the seq of the task whose run waits for its next
	// attempt and holds the lane (see retrying); 0 when none does.
	blocker uint64
}

type idxEntry struct {
	due      time.Time
	seq, ver uint64
}

type entryHeap []idxEntry

// entryHeap implements heap.Interface.
func (h entryHeap) Len() int { return len(h) }
func (h entryHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h entryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *entryHeap) Push(x any)   { *h = append(*h, x.(idxEntry)) }
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func laneSlot(lane wire.Lane) int {
	if lane == wire.LaneQueue {
		return 1
	}
	return 0
}

// index returns the task index, loading it from storage if needed.
func (s *turn) index(ctx context.Context) *taskIndex {
	if s.a.tasks != nil && s.a.tasks.st == s.st {
		return s.a.tasks
	}
	idx := &taskIndex{st: s.st}
	for i := range idx.lanes {
		idx.lanes[i].live = map[uint64]uint64{}
	}
	for _, prefix := range []string{scheduleKeys, queueKeys} {
		recs, err := s.records(ctx, prefix)
		if err != nil {
			s.event(object.Event{Kind: object.EventTaskError, Note: "index", Err: err.Error()})
			continue
		}
		for i := range recs {
			idx.add(&recs[i])
		}
	}
	s.a.tasks = idx
	es, err := s.storage.List(ctx, object.ListOptions{Prefix: runKeys})
	if err != nil {
		s.event(object.Event{Kind: object.EventTaskError, Note: "index", Err: err.Error()})
	}
	for _, e := range es {
		var rt retrying
		lane, seq, ok := parseRetryKey(e.Key)
		if !ok || e.Decode(&rt) != nil {
			s.event(object.Event{Kind: object.EventTaskError, Note: "index", Key: e.Key, Err: "not a task's retry"})
			continue
		}
		if _, live := idx.lanes[laneSlot(lane)].live[seq]; live {
			idx.block(lane, seq, rt.At)
		}
	}
	return idx
}

// parseRetryKey reads the lane and seq of a retryKey.
func parseRetryKey(key string) (wire.Lane, uint64, bool) {
	rest, ok := strings.CutPrefix(key, runKeys)
	if !ok {
		return 0, 0, false
	}
	lane := wire.LaneSchedule
	if r, ok := strings.CutPrefix(rest, "queue/"); ok {
		lane, rest = wire.LaneQueue, r
	} else if rest, ok = strings.CutPrefix(rest, "schedule/"); !ok {
		return 0, 0, false
	}
	seq, err := strconv.ParseUint(rest, 10, 64)
	return lane, seq, err == nil
}

func (x *taskIndex) add(rec *taskRecord) {
	x.ver++
	l := &x.lanes[laneSlot(rec.lane())]
	l.live[rec.Seq] = x.ver
	heap.Push(&l.heap, idxEntry{due: rec.Due, seq: rec.Seq, ver: x.ver})
}

func (x *taskIndex) remove(lane wire.Lane, seq uint64) {
	l := &x.lanes[laneSlot(lane)]
	delete(l.live, seq)
	if l.blocker == seq {
		l.blocker = 0
	}
}

// block makes the task seq of lane hold the lane until its run ends, its
// next attempt due at at (see retrying).
func (x *taskIndex) block(lane wire.Lane, seq uint64, at time.Time) {
	x.ver++
	l := &x.lanes[laneSlot(lane)]
	l.live[seq], l.blocker = x.ver, seq
	heap.Push(&l.heap, idxEntry{due: at, seq: seq, ver: x.ver})
}

// blocked returns the seq of the task that holds lane, if one does.
func (x *taskIndex) blocked(lane wire.Lane) (uint64, bool) {
	b := x.lanes[laneSlot(lane)].blocker
	return b, b != 0
}

// peek returns the earliest live entry of lane; while a task holds the
// lane (block), that task's entry.
func (x *taskIndex) peek(lane wire.Lane) (idxEntry, bool) {
	l := &x.lanes[laneSlot(lane)]
	if l.blocker != 0 {
		if e, ok := l.find(l.blocker); ok {
			return e, true
		}
		l.blocker = 0
	}
	for l.heap.Len() > 0 {
		top := l.heap[0]
		if v, ok := l.live[top.seq]; ok && v == top.ver {
			return top, true
		}
		heap.Pop(&l.heap)
	}
	return idxEntry{}, false
}

// find returns the live entry of the task seq.
func (l *laneIndex) find(seq uint64) (idxEntry, bool) {
	v, ok := l.live[seq]
	if !ok {
		return idxEntry{}, false
	}
	for _, e := range l.heap {
		if e.seq == seq && e.ver == v {
			return e, true
		}
	}
	return idxEntry{}, false
}

// reportDue tells the host when lane is next due.
func (s *turn) reportDue(ctx context.Context, lane wire.Lane) {
	e, ok := s.index(ctx).peek(lane)
	s.host.TasksDue(lane, e.due, ok)
}
