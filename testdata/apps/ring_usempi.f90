! ring_usempi: ring.c in Fortran with the mpi module (use mpi). A token travels around all ranks
! N times (first argument, default 10): rank 0 does N x (MPI_Send,
! MPI_Recv), the others N x (MPI_Recv, MPI_Send); the receives pass a real
! status array and check its MPI_SOURCE. Every rank prints one line with
! the last token it saw.
program ring_usempi
  use mpi
  implicit none
  integer :: rank, nprocs, ierr, i, n, next, prev
  integer :: st(MPI_STATUS_SIZE)
  integer(kind=8) :: token
  character(len=32) :: arg

  n = 10
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)
  token = 0
  do i = 1, n
    if (rank == 0) then
      token = token + 1
      call MPI_Send(token, 1, MPI_INTEGER8, next, 0, MPI_COMM_WORLD, ierr)
      call MPI_Recv(token, 1, MPI_INTEGER8, prev, 0, MPI_COMM_WORLD, st, ierr)
    else
      call MPI_Recv(token, 1, MPI_INTEGER8, prev, 0, MPI_COMM_WORLD, st, ierr)
      token = token + 1
      call MPI_Send(token, 1, MPI_INTEGER8, next, 0, MPI_COMM_WORLD, ierr)
    end if
    if (st(MPI_SOURCE) /= prev) stop 3
  end do
  write (*, '(a,i0,a,i0,a,i0,a,i0)') 'ring_usempi: rank ', rank, ' of ', nprocs, ' rounds ', n, ' token ', token
  call MPI_Finalize(ierr)
end program ring_usempi
