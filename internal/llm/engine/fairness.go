package engine

import "slices"

// Fairness across tenants (Request.Tenant): one tenant's many requests, or
// one request's many choices, must not keep another tenant's request
// waiting until MaxQueueWait refuses it. Within a priority the scheduler
// admits the sequence of the tenant running the fewest; a tenant running
// at least two sequences more than a waiting one gives one up (preempted,
// recomputed later) when no slot or no KV room is left; and a full queue
// makes room for a newcomer by refusing the newest request of the tenant
// queuing the most, when that is more than the newcomer's tenant queues.
// With one tenant (every Tenant "") the order is priority, then arrival.

// shares counts each tenant's running sequences.
func (s *scheduler) shares() map[string]int {
	share := make(map[string]int, len(s.running))
	for _, seq := range s.running {
		share[seq.req.tenant]++
	}
	return share
}

// nextWaiting is the index in s.waiting of the sequence to admit next: of
// the most urgent priority waiting, the first to arrive of the tenant
// running the fewest sequences.
func (s *scheduler) nextWaiting(share map[string]int) int {
	best := 0
	if len(s.waitingBy) < 2 {
		return best
	}
	priority := s.waiting[0].req.priority
	for i := 1; i < len(s.waiting) && share[s.waiting[best].req.tenant] > 0; i++ {
		seq := s.waiting[i]
		if seq.req.priority != priority {
			break
		}
		if share[seq.req.tenant] < share[s.waiting[best].req.tenant] {
			best = i
		}
	}
	return best
}

// preemptsBefore reports whether running sequence a is to be preempted
// before b: lower priority (a higher value) first, then the tenant running
// more sequences, then the later arrival.
func preemptsBefore(a, b *sequence, share map[string]int) bool {
	if a.req.priority != b.req.priority {
		return a.req.priority > b.req.priority
	}
	if sa, sb := share[a.req.tenant], share[b.req.tenant]; sa != sb {
		return sa > sb
	}
	return b.less(a)
}

// preemptFor makes room for seq, which cannot be admitted, by preempting a
// running sequence no more urgent than seq of a tenant running at least
// two sequences more than seq's (so that the two do not take turns
// preempting each other). It reports whether it preempted one.
func (s *scheduler) preemptFor(seq *sequence, share map[string]int) bool {
	var victim *sequence
	for _, o := range s.running {
		if o.req.priority < seq.req.priority || share[o.req.tenant] < share[seq.req.tenant]+2 {
			continue
		}
		if victim == nil || preemptsBefore(o, victim, share) {
			victim = o
		}
	}
	if victim == nil {
		return false
	}
	s.preempt(victim)
	return true
}

// makeQueueRoom refuses the newest queued request of the tenant queuing
// the most requests, when it queues more than newcomer's tenant, so that
// newcomer takes its place in a full queue. It reports whether it did.
func (s *scheduler) makeQueueRoom(newcomer *request) bool {
	queued := map[string]int{}
	for _, seq := range s.waiting {
		if !seq.admitted {
			queued[seq.req.tenant]++
		}
	}
	most := newcomer.tenant
	for tenant, n := range queued {
		if n > queued[most] {
			most = tenant
		}
	}
	if most == newcomer.tenant {
		return false
	}
	// The newest of its requests: the last in admission order.
	i := len(s.waiting) - 1
	for s.waiting[i].admitted || s.waiting[i].req.tenant != most {
		i--
	}
	seq := s.waiting[i]
	s.waiting = slices.Delete(s.waiting, i, i+1)
	s.unwait(seq)
	s.queued--
	seq.req.admitted <- &OverloadedError{RetryAfter: s.e.cfg.MaxQueueWait, Reason: "the admission queue is full, and another tenant queued less"}
	return true
}

// unwait counts seq out of the waiting queue (it has left s.waiting).
func (s *scheduler) unwait(seq *sequence) {
	if s.waitingBy[seq.req.tenant]--; s.waitingBy[seq.req.tenant] == 0 {
		delete(s.waitingBy, seq.req.tenant)
	}
}
