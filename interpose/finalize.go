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
	start, wall, err := jobSpan(c, j)
	if err != nil {
		return false, err
	}
	blk, blocks, info := j.encodeBlocks(start)
	off, nb, all, err := gatherInfos(c, blk, blocks, info)
	if err != nil {
		return false, err
	}
	// The job's id names the file and fills the header: rank 0's.
	var id string
	if me == 0 {
		id = j.id
	}
	final, err := sharePath(c, j.dir, id)
	if final == "" {
		return false, err
	}
	tmp := filepath.Join(filepath.Dir(final), "."+filepath.Base(final)+".tmp")

	traceErr := j.moveTraces(final)

	var infos []rankInfo
	var blockInfos [][]blockInfo
	if me == 0 {
		if infos, blockInfos, err = readInfos(all, c.Size(), nb); err != nil {
			return false, err
		}
	}
	ok, werr := writeAndRename(c, tmp, final, blk, off, func() ([]byte, []byte, error) {
		return rank0Parts(j, id, infos, blockInfos, start, wall)
	})
	if !ok {
		if werr == nil {
			return false, traceErr
		}
		return false, errors.Join(werr, traceErr)
	}
	if me == 0 && j.env("MPIFLOW_QUIET") != "1" {
		printWritten(c.Size(), infos, wall, final, began)
	}
	return true, traceErr
}

// jobSpan returns the job's common time origin, the earliest MPI_Init
// (unix ns), and its wallclock, the longest from MPI_Init to MPI_Finalize
// (ns).
func jobSpan(c comm, j *job) (start, wall int64, err error) {
	t := []int64{j.initReal}
	if err := c.Allreduce(t, opMin); err != nil {
		return 0, 0, err
	}
	w := []int64{j.wall}
	if err := c.Allreduce(w, opMax); err != nil {
		return 0, 0, err
	}
	return t[0], w[0], nil
}

// encodeBlocks encodes one block per recording thread of this rank, back
// to back, and returns them with their descriptions and this rank's
// record for rank 0.
func (j *job) encodeBlocks(start int64) (blk []byte, blocks []blockInfo, info rankInfo) {
	host := ""
	// The banner's %MPI is that of mpiflow stats: thread 0's time in MPI
	// after MPI_Init over its time after MPI_Init.
	var mpiTime, mpiWall int64
	for i, rec := range j.ranks(start) {
		r := rec.Rank
		host = r.Host
		if i == 0 {
			s := flowgraph.NewSummary()
			s.Add(r)
			mpiTime, mpiWall = s.Ranks[0].MPI, s.Ranks[0].Wall
		}
		if j.budget > 0 {
			r.Graph.FitBudgetFrom(j.budget, rec.timing)
		}
		b, crc, err := flowgraph.EncodeRank(r)
		if err != nil {
			// Keep the collective calls in step: the block is left out
			// and the file marked incomplete.
			fmt.Fprintf(os.Stderr, "mpiflow: rank %d thread %d: %v\n", j.comm.Rank(), r.Thread, err)
			continue
		}
		blocks = append(blocks, blockInfo{Thread: int64(r.Thread), Length: int64(len(b)), CRC: int64(crc)})
		blk = append(blk, b...)
	}
	info.MPITime, info.Wall, info.NBlocks = mpiTime, mpiWall, int64(len(blocks))
	copy(info.Host[:], host)
	return blk, blocks, info
}

// gatherInfos returns the offset of this rank's blocks among all ranks'
// and the largest number of blocks of a rank, nb, and gathers on rank 0
// every rank's record followed by its block descriptions, padded to nb.
func gatherInfos(c comm, blk []byte, blocks []blockInfo, info rankInfo) (off, nb int64, all []byte, err error) {
	off, err = c.Exscan(int64(len(blk)))
	if err != nil {
		return 0, 0, nil, err
	}
	n := []int64{int64(len(blocks))}
	if err := c.Allreduce(n, opMax); err != nil {
		return 0, 0, nil, err
	}
	var ib bytes.Buffer
	binary.Write(&ib, binary.LittleEndian, &info) // cannot fail on a bytes.Buffer
	binary.Write(&ib, binary.LittleEndian, append(blocks, make([]blockInfo, int(n[0])-len(blocks))...))
	all, err = c.Gather(ib.Bytes())
	if err != nil {
		return 0, 0, nil, err
	}
	return off, n[0], all, nil
}

// readInfos decodes on rank 0 what gatherInfos gathered from size ranks:
// each rank's record and block descriptions.
func readInfos(all []byte, size int, nb int64) ([]rankInfo, [][]blockInfo, error) {
	infos := make([]rankInfo, size)
	blockInfos := make([][]blockInfo, size)
	rd := bytes.NewReader(all)
	for i := range infos {
		bi := make([]blockInfo, nb)
		if err := binary.Read(rd, binary.LittleEndian, &infos[i]); err != nil {
			return nil, nil, fmt.Errorf("gather: %w", err)
		}
		if err := binary.Read(rd, binary.LittleEndian, bi); err != nil {
			return nil, nil, fmt.Errorf("gather: %w", err)
		}
		blockInfos[i] = bi[:min(max(infos[i].NBlocks, 0), nb)]
	}
	return infos, blockInfos, nil
}

// sharePath has rank 0 choose the job file's path (jobPath, with the
// job's id) and tells every rank. It returns "" when rank 0 could not,
// with rank 0's reason on rank 0 only, so that the message is printed
// once.
func sharePath(c comm, dir, id string) (string, error) {
	// An empty name means rank 0 could not, and the message that follows
	// says why.
	name := make([]byte, nameLen)
	var nameErr error
	if c.Rank() == 0 {
		final, err := jobPath(dir, id)
		if err == nil && len(final) >= nameLen-1 {
			err = fmt.Errorf("output path %s... is longer than %d bytes", final[:64], nameLen-2)
		}
		if nameErr = err; err != nil {
			copy(name[1:], err.Error())
		} else {
			name[0] = 1
			copy(name[1:], final)
		}
	}
	if err := c.Bcast(name); err != nil {
		return "", err
	}
	if name[0] != 1 {
		return "", nameErr
	}
	return string(bytes.TrimRight(name[1:], "\x00")), nil
}

// writeAndRename writes the job file as tmp (writeJobFile) and renames it
// final. It tells every rank whether the file was written, and returns
// the error this rank reports: rank 0's, or that of the rank where the
// writing failed, and none on the others.
func writeAndRename(c comm, tmp, final string, blk []byte, off int64, parts func() ([]byte, []byte, error)) (bool, error) {
	me := c.Rank()
	werr := writeJobFile(c, tmp, blk, off, parts)
	if werr == nil && me == 0 {
		werr = os.Rename(tmp, final)
	}
	switch werr = agree(c, werr); {
	case werr == nil:
		return true, nil
	case me == 0:
		os.Remove(tmp)
		return false, fmt.Errorf("could not write %s: %w (the application's results are not affected)", final, werr)
	case errors.Is(werr, errElsewhere):
		return false, nil
	}
	// Rank 0 says it failed on another rank; this one says why.
	return false, fmt.Errorf("rank %d: could not write %s: %w", me, final, werr)
}

// printWritten prints what rank 0 wrote: the job's ranks, wallclock and
// share of time in MPI, the file, and what the profile cost (its bytes
// and the time of writing it).
func printWritten(size int, infos []rankInfo, wall int64, final string, began time.Time) {
	var mpi, tot int64
	for _, in := range infos {
		mpi += in.MPITime
		tot += in.Wall
	}
	pct := 0.0
	if tot > 0 {
		pct = 100 * float64(mpi) / float64(tot)
	}
	cost := ""
	if st, err := os.Stat(final); err == nil {
		cost = fmt.Sprintf(" (%s in %.2f s)", units.Bytes(float64(st.Size())), time.Since(began).Seconds())
	}
	fmt.Fprintf(os.Stderr, "mpiflow: %d ranks, wallclock %.3f s, %.1f%% in MPI; wrote %s%s\n", size, float64(wall)/1e9, pct, final, cost)
}

// rank0Parts returns the preamble and the footer that rank 0 writes for
// the job of the given id.
func rank0Parts(j *job, id string, infos []rankInfo, blocks [][]blockInfo, start, wall int64) ([]byte, []byte, error) {
	h := flowgraph.Header{
		JobID:         id,
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

// jobPath chooses the job file's name: <exe>.<id>.mpiflow in dir
// (MPIFLOW_DIR expanded; "" or "." for the working directory), with a
// numeric suffix if that name is taken.
func jobPath(dir, id string) (string, error) {
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
	base := filepath.Join(dir, sanitize(exe)+"."+id)
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

// sanitize makes s a file name part: each byte that is not a letter, a
// digit, '-', '_' or '.' becomes '_', byte by byte as jobid.c's mf_job_id
// does for the job id.
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
