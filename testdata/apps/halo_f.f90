! halo_f: halo.c in Fortran with mpif.h. The ranks form a px x py grid
! (MPI_Dims_create, not periodic); every iteration (first argument, default
! 100) posts an MPI_Irecv per neighbor, MPI_Sends per neighbor, MPI_Waits
! per neighbor, computes a Jacobi sweep and MPI_Allreduces the residual.
! Every rank prints one line: its rank, neighbor count and the residual.
program halo_f
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 32
  double precision :: u(0:n+1, 0:n+1), v(0:n+1, 0:n+1)
  double precision :: sendb(n, 4), recvb(n, 4), res, local
  integer :: rank, nprocs, ierr, iters, it, k, i, j, px, py, x, y, nn
  integer :: dims(2), nb(4), req(4)
  character(len=32) :: arg

  iters = 100
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  dims = 0
  call MPI_Dims_create(nprocs, 2, dims, ierr)
  px = dims(1)
  py = dims(2)
  x = mod(rank, px)
  y = rank / px
  nn = 0
  if (x > 0) then
    nn = nn + 1
    nb(nn) = rank - 1
  end if
  if (x < px - 1) then
    nn = nn + 1
    nb(nn) = rank + 1
  end if
  if (y > 0) then
    nn = nn + 1
    nb(nn) = rank - px
  end if
  if (y < py - 1) then
    nn = nn + 1
    nb(nn) = rank + px
  end if
  do j = 0, n + 1
    do i = 0, n + 1
      u(i, j) = dble(mod(i * 7 + j * 3 + rank, 11))
    end do
  end do
  v = u
  res = 0
  do it = 1, iters
    do k = 1, nn
      call MPI_Irecv(recvb(1, k), n, MPI_DOUBLE_PRECISION, nb(k), 0, MPI_COMM_WORLD, req(k), ierr)
    end do
    do k = 1, nn
      do j = 1, n
        sendb(j, k) = u(k, j)
      end do
      call MPI_Send(sendb(1, k), n, MPI_DOUBLE_PRECISION, nb(k), 0, MPI_COMM_WORLD, ierr)
    end do
    do k = 1, nn
      call MPI_Wait(req(k), MPI_STATUS_IGNORE, ierr)
    end do
    do k = 1, nn
      do j = 1, n
        u(0, j) = u(0, j) + 1d-3 * recvb(j, k)
      end do
    end do
    local = 0
    do j = 1, n
      do i = 1, n
        v(i, j) = 0.25d0 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1))
        local = local + abs(v(i, j) - u(i, j))
      end do
    end do
    u = v
    call MPI_Allreduce(local, res, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,es14.6)') 'halo_f: rank ', rank, ' of ', nprocs, ' grid ', px, 'x', py, &
    ' neighbors ', nn, ' residual ', res
  call MPI_Finalize(ierr)
end program halo_f
