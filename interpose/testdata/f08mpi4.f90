! f08mpi4: MPI-4.0 procedures through the mpi_f08 module (MPICH 4; Open
! MPI 4.1's module has none): 3 MPI_Isendrecv of 4 doubles around a ring
! with their Waits, a persistent MPI_Barrier_init started twice, a send
! and receive with an INTEGER(MPI_COUNT_KIND) count (the large-count
! MPI_Send_c, MPI_Recv_c) between rank pairs, and partitioned
! communication: MPI_Psend_init / MPI_Precv_init of 4 partitions of 2
! doubles, MPI_Pready, MPI_Pready_range, MPI_Pready_list on the sending
! side and MPI_Parrived polled on the receiving one. Run with an even
! number of ranks.
program f08mpi4
  use mpi_f08
  implicit none
  integer :: rank, nranks, right, left, pair, i, errs
  integer(kind=MPI_COUNT_KIND) :: n
  double precision :: s(4), r(4), p(8)
  type(MPI_Request) :: req
  type(MPI_Status) :: st
  logical :: arrived

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  pair = ieor(rank, 1)
  errs = 0

  do i = 1, 3
    s = rank + i
    call MPI_Isendrecv(s, 4, MPI_DOUBLE_PRECISION, right, 1, r, 4, MPI_DOUBLE_PRECISION, left, 1, &
                       MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    if (r(4) /= left + i) errs = errs + 1
  end do

  call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, req)
  do i = 1, 2
    call MPI_Start(req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
  end do
  call MPI_Request_free(req)

  n = 3
  if (mod(rank, 2) == 0) then
    s = 7
    call MPI_Send(s, n, MPI_DOUBLE_PRECISION, pair, 2, MPI_COMM_WORLD)
  else
    r = 0
    call MPI_Recv(r, n, MPI_DOUBLE_PRECISION, pair, 2, MPI_COMM_WORLD, st)
    if (r(3) /= 7 .or. r(4) /= 0 .or. st%MPI_SOURCE /= pair) errs = errs + 1
  end if

  n = 2
  if (mod(rank, 2) == 0) then
    p = rank
    call MPI_Psend_init(p, 4, n, MPI_DOUBLE_PRECISION, pair, 3, MPI_COMM_WORLD, MPI_INFO_NULL, req)
    call MPI_Start(req)
    call MPI_Pready(0, req)
    call MPI_Pready_range(1, 2, req)
    call MPI_Pready_list(1, [3], req)
  else
    p = -1
    call MPI_Precv_init(p, 4, n, MPI_DOUBLE_PRECISION, pair, 3, MPI_COMM_WORLD, MPI_INFO_NULL, req)
    call MPI_Start(req)
    arrived = .false.
    do while (.not. arrived)
      call MPI_Parrived(req, 3, arrived)
    end do
  end if
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call MPI_Request_free(req)
  if (mod(rank, 2) == 1 .and. any(p /= pair)) errs = errs + 1

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a,i0,a)', 'f08mpi4: ', nranks, ' ranks, ', errs, ' errors'
  call MPI_Finalize()
  if (errs /= 0) stop 1
end program f08mpi4
