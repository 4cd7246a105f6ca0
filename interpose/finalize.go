package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"mpiflow/flowgraph"
	"mpiflow/internal/units"
)

func getenv(k string) string { return os.Getenv(k) }

// hostLen bounds a host name in the gathered per-rank record.
const hostLen = 256

// rankInfo is the fixed part of the record every rank sends to rank 0;
// NBlocks blockInfos follow (padded to the largest count of any rank).
type rankInfo struct {
	MPITime, Wall, NBlocks int64
	Host                   [hostLen]byte
}

// blockInfo describes one thread's block of a rank.
type blockInfo struct {
	Thread, Length, CRC int64
}

// nameLen bounds the path rank 0 broadcasts.
const nameLen = 4096

// finalize writes the job file collectively; every rank calls it. written
// is the same on every rank: whether the job file is complete under its
// final name. Only rank 0 returns errors about the job file, so the
// message is printed once; every rank returns those of its own traces.
func finalize(j *job) (written bool, err error) {
	began := time.Now()
	c := j.comm
	me := c.Rank()

	// A common time origin: the earliest MPI_Init; and the job's wallclock.
	t := []int64{j.initReal}
	if err := c.Allreduce(t, opMin); err != nil {
		return false, err
	}
	start := t[0]
	w := []int64{j.wall}
	if err := c.Allreduce(w, opMax); err != nil {
		return false, err
	}
	wall := w[0]

	// One block per recording thread, back to back.
	var blk []byte
	var blocks []blockInfo
	host := ""
	// The banner's %MPI is that of mpiflow stats: thread 0's time in MPI
	// after MPI_Init over its time after MPI_Init.
	var mpiTime, mpiWall int64
	for i, r := range j.ranks(start) {
		host = r.Host
		if i == 0 {
			s := flowgraph.NewSummary()
			s.Add(r)
			mpiTime, mpiWall = s.Ranks[0].MPI, s.Ranks[0].Wall
		}
		if j.budget > 0 {
			r.Graph.FitBudget(j.budget)
		}
		b, crc, err := flowgraph.EncodeRank(r)
		if err != nil {
			// Keep the collective calls in step: the block is left out
			// and the file marked incomplete.
			fmt.Fprintf(os.Stderr, "mpiflow: rank %d thread %d: %v\n", me, r.Thread, err)
			continue
		}
		blocks = append(blocks, blockInfo{Thread: int64(r.Thread), Length: int64(len(b)), CRC: int64(crc)})
		blk = append(blk, b...)
	}
	off, err := c.Exscan(int64(len(blk)))
	if err != nil {
		return false, err
	}
	nb := []int64{int64(len(blocks))}
	if err := c.Allreduce(nb, opMax); err != nil {
		return false, err
	}
	var info rankInfo
	info.MPITime, info.Wall, info.NBlocks = mpiTime, mpiWall, int64(len(blocks))
	copy(info.Host[:], host)
	var ib bytes.Buffer
	binary.Write(&ib, binary.LittleEndian, &info) // cannot fail on a bytes.Buffer
	binary.Write(&ib, binary.LittleEndian, append(blocks, make([]blockInfo, int(nb[0])-len(blocks))...))
	all, err := c.Gather(ib.Bytes())
	if err != nil {
		return false, err
	}

	// Rank 0 picks the file name and tells everybody; an empty name means
	// it could not, and the message that follows says why.
	var final string
	name := make([]byte, nameLen)
	var nameErr error
	if me == 0 {
		final, nameErr = jobPath(j.dir, j.env)
		if nameErr == nil && len(final) >= nameLen-1 {
			nameErr = fmt.Errorf("output path %s... is longer than %d bytes", final[:64], nameLen-2)
		}
		if nameErr != nil {
			copy(name[1:], nameErr.Error())
		} else {
			name[0] = 1
			copy(name[1:], final)
		}
	}
	if err := c.Bcast(name); err != nil {
		return false, err
	}
	if name[0] != 1 {
		if me == 0 {
			return false, nameErr
		}
		return false, nil
	}
	final = string(bytes.TrimRight(name[1:], "\x00"))
	tmp := filepath.Join(filepath.Dir(final), "."+filepath.Base(final)+".tmp")

	traceErr := j.moveTraces(final)

	infos := make([]rankInfo, c.Size())
	blockInfos := make([][]blockInfo, c.Size())
	if me == 0 {
		rd := bytes.NewReader(all)
		for i := range infos {
			bi := make([]blockInfo, nb[0])
			if err := binary.Read(rd, binary.LittleEndian, &infos[i]); err != nil {
				return false, fmt.Errorf("gather: %w", err)
			}
			if err := binary.Read(rd, binary.LittleEndian, bi); err != nil {
				return false, fmt.Errorf("gather: %w", err)
			}
			blockInfos[i] = bi[:min(max(infos[i].NBlocks, 0), nb[0])]
		}
	}
	werr := writeJobFile(c, tmp, blk, off, func() ([]byte, []byte, error) {
		return rank0Parts(j, infos, blockInfos, start, wall)
	})
	if werr == nil && me == 0 {
		werr = os.Rename(tmp, final)
	}
	if werr = agree(c, werr); werr != nil {
		if me != 0 {
			if errors.Is(werr, errElsewhere) {
				return false, traceErr
			}
			// Rank 0 says it failed on another rank; this one says why.
			return false, errors.Join(fmt.Errorf("rank %d: could not write %s: %w", me, final, werr), traceErr)
		}
		os.Remove(tmp)
		return false, errors.Join(fmt.Errorf("could not write %s: %w (the application's results are not affected)", final, werr), traceErr)
	}
	if me == 0 && j.env("MPIFLOW_QUIET") != "1" {
		var mpi, tot int64
		for _, in := range infos {
			mpi += in.MPITime
			tot += in.Wall
		}
		pct := 0.0
		if tot > 0 {
			pct = 100 * float64(mpi) / float64(tot)
		}
		// What the profile cost: its bytes and the time of writing it.
		cost := ""
		if st, err := os.Stat(final); err == nil {
			cost = fmt.Sprintf(" (%s in %.2f s)", units.Bytes(float64(st.Size())), time.Since(began).Seconds())
		}
		fmt.Fprintf(os.Stderr, "mpiflow: %d ranks, wallclock %.3f s, %.1f%% in MPI; wrote %s%s\n", c.Size(), float64(wall)/1e9, pct, final, cost)
	}
	return true, traceErr
}

// rank0Parts returns the preamble and the footer that rank 0 writes.
func rank0Parts(j *job, infos []rankInfo, blocks [][]blockInfo, start, wall int64) ([]byte, []byte, error) {
	h := flowgraph.Header{
		JobID:         jobID(j.env),
		Command:       command(),
		StartUnixNano: start,
		Wallclock:     wall,
		NumRanks:      len(infos),
		MPILibrary:    j.mpiLib,
		MPIVersion:    j.mpiVer,
		ClockSource:   j.clock,
		KeyFields:     j.keyFields,
		Counters:      j.counters,
		Env:           runEnv(os.Environ()),
	}
	h.Executable, _ = os.Executable()
	h.User = userName(j.env)
	idx := make([]flowgraph.IndexEntry, 0, len(infos))
	off := int64(flowgraph.PreambleSize)
	var missing []string
	for i, in := range infos {
		h.Hosts = append(h.Hosts, string(bytes.TrimRight(in.Host[:], "\x00")))
		if len(blocks[i]) == 0 {
			missing = append(missing, strconv.Itoa(i))
		}
		for _, b := range blocks[i] {
			idx = append(idx, flowgraph.IndexEntry{Rank: i, Thread: int(b.Thread), Offset: off, Length: b.Length, CRC: uint32(b.CRC)})
			off += b.Length
		}
	}
	if len(missing) > 0 {
		h.Incomplete = true
		fmt.Fprintf(os.Stderr, "mpiflow: no data from rank(s) %s\n", strings.Join(missing, ","))
	}
	foot, err := flowgraph.EncodeFooter(h, idx, off)
	if err != nil {
		return nil, nil, err
	}
	return flowgraph.Preamble(), append([]byte(nil), foot...), nil
}

// writeJobFile writes the blocks collectively at PreambleSize+off; rank 0
// also writes the preamble and footer from parts. Every rank returns the
// same verdict, so they all stay in step.
func writeJobFile(c comm, tmp string, blk []byte, off int64, parts func() ([]byte, []byte, error)) error {
	total := []int64{int64(len(blk))}
	if err := c.Allreduce(total, opSum); err != nil {
		return err
	}
	if err := agree(c, c.Open(tmp)); err != nil {
		return err
	}
	// Every rank learns the outcome of each step before the next
	// collective one: after a failed write, Open MPI's ranks leave the
	// collective calls out of step and the job hangs.
	var werr error
	var pre, foot []byte
	if c.Rank() == 0 {
		var err error
		pre, foot, err = parts()
		if err == nil {
			err = c.WriteAt(0, pre)
		}
		if err == nil {
			err = c.WriteAt(flowgraph.PreambleSize+total[0], foot)
		}
		werr = err
	}
	werr = agree(c, werr)
	if werr == nil {
		werr = agree(c, c.WriteAtAll(flowgraph.PreambleSize+off, blk))
	}
	if err := c.Close(); err != nil && werr == nil {
		werr = err
	}
	if werr == nil {
		// What the file system holds, whatever MPI-IO said: on a full file
		// system Open MPI's collective write can leave a hole and report
		// success. Each rank reads back its own part.
		want := []part{{flowgraph.PreambleSize + off, blk}}
		size := int64(-1)
		if c.Rank() == 0 {
			want = append(want, part{0, pre}, part{flowgraph.PreambleSize + total[0], foot})
			size = flowgraph.PreambleSize + total[0] + int64(len(foot))
		}
		werr = readBack(tmp, want, size)
	}
	return agree(c, werr)
}

// part is bytes written at an offset of a file.
type part struct {
	off int64
	b   []byte
}

// readBack checks that the file at path holds parts and, unless size is
// negative, has that size, after flushing it to its storage (fsync: the
// collective MPI_File_sync of Open MPI returns early on a rank that failed
// to write while the others wait in it).
func readBack(path string, parts []part, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if size >= 0 {
		if err := f.Sync(); err != nil {
			return err
		}
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if st.Size() != size {
			return fmt.Errorf("the file holds %d bytes of %d (is the file system full?)", st.Size(), size)
		}
	}
	for _, p := range parts {
		got := make([]byte, len(p.b))
		if _, err := f.ReadAt(got, p.off); err != nil {
			return fmt.Errorf("read back %d bytes at %d: %w", len(p.b), p.off, err)
		}
		if !bytes.Equal(got, p.b) {
			return fmt.Errorf("the %d bytes at %d are not those written (is the file system full?)", len(p.b), p.off)
		}
	}
	return nil
}

// errElsewhere is what the ranks without an error of their own report when
// another rank failed.
var errElsewhere = errors.New("failed on another rank")

// agree makes every rank return an error if any rank has one.
func agree(c comm, err error) error {
	v := []int64{0}
	if err != nil {
		v[0] = 1
	}
	if rerr := c.Allreduce(v, opMax); rerr != nil {
		return rerr
	}
	if err != nil {
		return err
	}
	if v[0] != 0 {
		return errElsewhere
	}
	return nil
}

// moveTraces renames this rank's full traces next to the job file, and
// removes those that could not be written whole (a full file system): a
// truncated trace under its final name would pass for the run's.
func (j *job) moveTraces(final string) error {
	var errs []error
	threads := slices.Collect(maps.Keys(j.traces))
	for t := range j.traceErrs {
		if _, ok := j.traces[t]; !ok {
			threads = append(threads, t)
		}
	}
	slices.Sort(threads)
	for _, thread := range threads {
		tmp, ok := j.traces[thread]
		dst := flowgraph.TracePath(final, j.comm.Rank(), thread)
		if werr := j.traceErrs[thread]; werr != nil || !ok {
			if ok {
				os.Remove(tmp)
			}
			errs = append(errs, fmt.Errorf("full trace of rank %d thread %d: %w; not kept", j.comm.Rank(), thread, werr))
		} else if err := os.Rename(tmp, dst); err != nil {
			errs = append(errs, fmt.Errorf("full trace of rank %d thread %d: %w", j.comm.Rank(), thread, err))
		}
	}
	return errors.Join(errs...)
}

// jobPath chooses the job file's name: <exe>.<job id>.mpiflow in dir
// (MPIFLOW_DIR expanded; "" or "." for the working directory), with a
// numeric suffix if that name is taken.
func jobPath(dir string, env func(string) string) (string, error) {
	if dir == "" || dir == "." {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("no output directory: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("output directory %s: %w", dir, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("output directory (MPIFLOW_DIR): %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("output directory (MPIFLOW_DIR) %s is not a directory", dir)
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return "", fmt.Errorf("output directory (MPIFLOW_DIR) %s is not writable: %w", dir, err)
	}
	exe := "mpi"
	if p, err := os.Executable(); err == nil {
		exe = filepath.Base(p)
	}
	base := filepath.Join(dir, sanitize(exe)+"."+jobID(env))
	p := base + ".mpiflow"
	for i := 2; ; i++ {
		_, err := os.Lstat(p)
		if os.IsNotExist(err) {
			return p, nil
		}
		if err != nil { // a name too long, say: no other will do
			return "", fmt.Errorf("job file %s: %w", p, err)
		}
		p = fmt.Sprintf("%s.%d.mpiflow", base, i)
	}
}

// userName is the name of the user running the process: from the user
// database, else $USER, else the numeric uid.
func userName(env func(string) string) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := env("USER"); u != "" {
		return u
	}
	return strconv.Itoa(os.Getuid())
}

// jobID is the scheduler's job id when there is one (the name sites file
// their jobs by), else the launcher's, else rank 0's process id.
func jobID(env func(string) string) string {
	for _, k := range []string{"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID",
		"OMPI_MCA_ess_base_jobid", "PMI_JOBID"} {
		if v := env(k); v != "" {
			if s := env("SLURM_STEP_ID"); k == "SLURM_JOB_ID" && s != "" {
				v += "." + s
			}
			return sanitize(v)
		}
	}
	return strconv.Itoa(os.Getpid())
}

// sanitize makes s a file name part: each byte that is not a letter, a
// digit, '-', '_' or '.' becomes '_', byte by byte as crash.c's job_id
// does, so that the partial files and the job file name one job alike
// (Flux's job ids begin with "ƒ", two bytes).
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// command is this process's command line.
func command() []string {
	b, err := os.ReadFile("/proc/self/cmdline")
	if err != nil {
		return os.Args
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// runEnv returns, sorted, the variables of env that tune a run or name its
// batch job: mpiflow's own, OpenMP's and the threads of math libraries, the
// MPI libraries' and their transports' (Open MPI's MCA, MPICH, Intel MPI,
// UCX, libfabric), and the schedulers' job ids and sizes. Others are left
// out: they are not the profile's business and may hold secrets; so are
// the ones Open MPI's launcher sets for its own ranks (addresses, session
// directories, a transport key).
func runEnv(env []string) []string {
	prefixes := []string{"MPIFLOW_", "OMP_", "OMPI_MCA_", "MPICH_", "MPIR_CVAR_", "I_MPI_", "UCX_", "FI_"}
	launcher := []string{"OMPI_MCA_orte_", "OMPI_MCA_prte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
		"OMPI_MCA_shmem_RUNTIME_QUERY_hint"}
	names := map[string]bool{"MKL_NUM_THREADS": true, "OPENBLAS_NUM_THREADS": true, "SLURM_JOB_ID": true,
		"SLURM_JOB_NAME": true, "SLURM_NNODES": true, "SLURM_NTASKS": true, "PBS_JOBID": true, "LSB_JOBID": true,
		"FLUX_JOB_ID": true, "COBALT_JOBID": true}
	var out []string
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		keep := names[name]
		for _, p := range prefixes {
			keep = keep || strings.HasPrefix(name, p)
		}
		for _, p := range launcher {
			keep = keep && !strings.HasPrefix(name, p)
		}
		if keep {
			out = append(out, kv)
		}
	}
	slices.Sort(out)
	return out
}

// fillProcess adds the host name and resource usage of this process.
func fillProcess(r *flowgraph.Rank) {
	r.Host, _ = os.Hostname()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		r.UserTime = ru.Utime.Nano()
		r.SysTime = ru.Stime.Nano()
		r.MaxRSS = ru.Maxrss * 1024
	}
}
