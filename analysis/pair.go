package analysis

// ComparedRanks picks the ranks that the report compares by default: the
// rank with the most compute time (slow) against the one of its group,
// else of the job, with the least (fast; slow itself for a job of one
// rank). Both index Ranks and Summary.Ranks.
func (j *Job) ComparedRanks() (fast, slow int) {
	compute := make([]int64, len(j.Ranks))
	for i, rs := range j.Summary.Ranks {
		compute[i] = rs.Compute
		if compute[i] > compute[slow] {
			slow = i
		}
	}
	fast = -1
	for _, pass := range []bool{true, false} {
		for i := range j.Ranks {
			if i == slow || (pass && j.Ranks[i].Group != j.Ranks[slow].Group) {
				continue
			}
			if fast < 0 || compute[i] < compute[fast] {
				fast = i
			}
		}
		if fast >= 0 {
			break
		}
	}
	if fast < 0 {
		fast = slow
	}
	return fast, slow
}
