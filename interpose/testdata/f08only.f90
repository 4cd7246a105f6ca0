! f08only: a program that uses only the mpi_f08 module and no choice
! buffer, for TestApps: its calls (gfortran: mpi_init_f08_ ...) reach the
! MPI library without passing through an MPI_ symbol, and are recorded by
! the library's f08 entry points.
program f08only
  use mpi_f08
  implicit none
  integer :: rank, size
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'f08only: ', size, ' ranks'
  call MPI_Finalize()
end program f08only
