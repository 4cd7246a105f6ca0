! fmpi4: MPI-4.0 procedures through the mpi module (mpif.h's entry points;
! MPICH 4): 3 MPI_Isendrecv of 4 doubles around a ring with their Waits,
! and a persistent MPI_Barrier_init started once.
program fmpi4
  use mpi
  implicit none
  integer :: rank, nranks, right, left, ierr, req, i, errs
  double precision :: s(4), r(4)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  errs = 0
  do i = 1, 3
    s = rank + i
    call MPI_Isendrecv(s, 4, MPI_DOUBLE_PRECISION, right, 1, r, 4, MPI_DOUBLE_PRECISION, left, 1, &
                       MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    if (r(4) /= left + i) errs = errs + 1
  end do
  call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, req, ierr)
  call MPI_Start(req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Request_free(req, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a)', 'fmpi4: ', nranks, ' ranks, ', errs, ' errors'
  call MPI_Finalize(ierr)
  if (errs /= 0) stop 1
end program fmpi4
