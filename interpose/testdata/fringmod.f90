program fringmod
  use mpi
  implicit none
  integer :: rank, nprocs, ierr, i, n, right, left, req(2)
  integer :: st(MPI_STATUS_SIZE)
  double precision :: buf(4), rbuf(4), s
  integer :: graph, indeg, outdeg
  logical :: weighted
  n = 5
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  buf = rank
  do i = 1, n
    call MPI_Irecv(rbuf, 4, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(buf, 4, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    call MPI_Send(buf, 4, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, ierr)
    call MPI_Recv(rbuf, 4, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, st, ierr)
    if (st(MPI_SOURCE) /= left) stop 3
    s = rbuf(1)
    call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  ! Fortran's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are variables:
  ! an interposer that took them for statuses would write into them.
  call MPI_Sendrecv(buf, 4, MPI_DOUBLE_PRECISION, right, 3, rbuf, 4, MPI_DOUBLE_PRECISION, left, 3, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (any(MPI_STATUS_IGNORE /= 0)) stop 4
  if (rbuf(1) /= left) stop 5
  ! MPI_UNWEIGHTED is a variable too: passed to C as it is, the graph
  ! would be weighted.
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [left], MPI_UNWEIGHTED, 1, [right], MPI_UNWEIGHTED, &
                                      MPI_INFO_NULL, .false., graph, ierr)
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, weighted, ierr)
  if (weighted .or. indeg /= 1 .or. outdeg /= 1) stop 6
  call MPI_Comm_free(graph, ierr)
  if (rank == 0) print *, 'fring', n, s
  call MPI_Finalize(ierr)
end program
