! f08ring: the ring of fring.f90 through the mpi_f08 module, for
! TestApps (f08ringCheck). Each rank repeats 5 times Irecv, Isend, Waitall
! (MPI_STATUSES_IGNORE), Send of 3 doubles, Recv with MPI_ANY_SOURCE and a
! status (its source and count checked), Allreduce (MPI_IN_PLACE); then a
! Sendrecv (MPI_STATUS_IGNORE, which must stay untouched), an unweighted
! Dist_graph_create_adjacent (MPI_UNWEIGHTED) and its Comm_free, a Bcast of a
! 2-D array from rank 1, Irecv (MPI_ANY_SOURCE) and Isend of 2 doubles with
! a Waitall into an array of statuses, a Send of a strided section (every other of 8
! doubles) with its Recv, a Barrier and Finalize. ierror is given to some
! calls and left out of others. It checks what it receives, so its output
! and exit code tell whether the interposer changed anything.
program f08ring
  use mpi_f08
  implicit none
  integer :: rank, nprocs, ierr, i, n, right, left, cnt
  type(MPI_Request) :: req(2)
  type(MPI_Status) :: st, ignored, sts(2)
  double precision :: buf(4), rbuf(4), s, grid(4, 3), strided(8)
  type(MPI_Comm) :: graph
  integer :: indeg, outdeg
  logical :: weighted
  n = 5
  ignored = MPI_STATUS_IGNORE
  call MPI_Init(ierr)
  if (ierr /= MPI_SUCCESS) stop 2
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  buf = rank
  do i = 1, n
    call MPI_Irecv(rbuf, 4, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, req(1))
    call MPI_Isend(buf, 4, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
    if (rbuf(1) /= left) stop 3
    call MPI_Send(buf, 3, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD)
    call MPI_Recv(rbuf, 4, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, st, ierr)
    if (ierr /= MPI_SUCCESS .or. st%MPI_SOURCE /= left .or. st%MPI_TAG /= 2) stop 4
    call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt)
    if (cnt /= 3) stop 5
    s = rbuf(1)
    call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  end do
  ! MPI_STATUS_IGNORE is a variable of the module: an interposer that took
  ! it for a status would write into it.
  call MPI_Sendrecv(buf, 4, MPI_DOUBLE_PRECISION, right, 3, rbuf, 4, MPI_DOUBLE_PRECISION, left, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (rbuf(1) /= left) stop 6
  if (MPI_STATUS_IGNORE%MPI_SOURCE /= ignored%MPI_SOURCE .or. MPI_STATUS_IGNORE%MPI_TAG /= ignored%MPI_TAG) stop 7
  ! MPI_UNWEIGHTED is a variable too: passed to C as it is, the graph
  ! would be weighted.
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [left], MPI_UNWEIGHTED, 1, [right], MPI_UNWEIGHTED, &
                                      MPI_INFO_NULL, .false., graph, ierr)
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, weighted, ierr)
  if (weighted .or. indeg /= 1 .or. outdeg /= 1) stop 10
  call MPI_Comm_free(graph, ierr)
  grid = rank
  call MPI_Bcast(grid, 12, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD)
  if (any(grid /= 1)) stop 8
  ! Statuses of a Waitall, in an array of TYPE(MPI_Status).
  call MPI_Irecv(rbuf, 2, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, req(1))
  call MPI_Isend(buf, 2, MPI_DOUBLE_PRECISION, right, 5, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, sts, ierr)
  if (sts(1)%MPI_SOURCE /= left .or. sts(1)%MPI_TAG /= 5) stop 11
  call MPI_Get_count(sts(1), MPI_DOUBLE_PRECISION, cnt)
  if (cnt /= 2) stop 12
  do i = 1, 8
    strided(i) = 10 * rank + i
  end do
  call MPI_Send(strided(1:8:2), 4, MPI_DOUBLE_PRECISION, right, 4, MPI_COMM_WORLD)
  call MPI_Recv(rbuf, 4, MPI_DOUBLE_PRECISION, left, 4, MPI_COMM_WORLD, st)
  if (any(rbuf /= [1, 3, 5, 7] + 10 * left)) stop 9
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,f0.1)', 'f08ring: ', nprocs, ' ranks, sum ', s
  call MPI_Finalize()
end program f08ring
