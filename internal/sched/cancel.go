package sched

import (
	"cmp"
	"slices"
)

// cancelGroup is the blocked tasks that wait on contexts sharing one Done
// channel, in the order they blocked.
type cancelGroup struct {
	done  <-chan struct{}
	tasks list[Task]        // linked through Task.wait
	link  node[cancelGroup] // in the kernel's groups
}

// addCancel puts the blocking task t in the cancel group of done.
func (k *Kernel) addCancel(t *Task, done <-chan struct{}) {
	g := k.cancels[done]
	if g == nil {
		if k.cancels == nil {
			k.cancels = map[<-chan struct{}]*cancelGroup{}
		}
		g = &cancelGroup{done: done}
		k.groups.push(g, groupNode)
		k.cancels[done] = g
	}
	k.cancelSeq++
	t.cgroup, t.cseq = g, k.cancelSeq
	g.tasks.push(t, waitNode)
}

func (k *Kernel) dropCancel(t *Task) {
	if t.waitCtx == nil {
		return
	}
	t.waitCtx = nil
	g := t.cgroup
	g.tasks.remove(t, waitNode)
	t.cgroup = nil
	if g.tasks.n == 0 { // the last waiter on this channel: drop the group
		k.groups.remove(g, groupNode)
		delete(k.cancels, g.done)
	}
}

// checkCancels readies blocked tasks whose context was cancelled since the
// last switch. Cancellation happens synchronously in the running task, so
// checking at every switch observes it at a deterministic point. It looks
// at each Done channel once, and readies the cancelled tasks in the order
// they blocked, as a scan of every waiting task in that order would.
func (k *Kernel) checkCancels() {
	fired := k.fired[:0]
	groups := 0
	for g := k.groups.head; g != nil; g = g.link.next {
		select {
		case <-g.done:
			groups++
			for t := g.tasks.head; t != nil; t = t.wait.next {
				fired = append(fired, t)
			}
		default:
		}
	}
	if len(fired) == 0 {
		return
	}
	if groups > 1 {
		slices.SortFunc(fired, func(a, b *Task) int { return cmp.Compare(a.cseq, b.cseq) })
	}
	for _, t := range fired {
		k.ready(t, WokenByCancel) // removes t from its group
	}
	clear(fired)
	k.fired = fired[:0]
}
