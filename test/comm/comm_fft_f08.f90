! SPDX-License-Identifier: BSD-3-Clause
! comm_fft.c in Fortran 2008 (use mpi_f08): an FFT-like program on a 2x2
! process grid whose transposes run on row and column communicators from
! MPI_Comm_split, then an in-place MPI_Allreduce on the row communicator;
! the hashes then travel once round a ring (MPI_Sendrecv) and from rank 1
! to rank 0 (MPI_Send, MPI_Recv with MPI_STATUS_IGNORE, ierror absent).
! Rank 0 prints every rank's hash of its final data, so a plain and a tuned
! run can be compared bit for bit. Usage: comm_fft_f08 [STEPS] (4 ranks).
program comm_fft_f08
  use mpi_f08
  use, intrinsic :: iso_fortran_env, only: int64, real64
  implicit none
  integer, parameter :: b = 16384          ! doubles per block: 128 KiB
  integer :: rank, nprocs, s, steps, i, r
  type(MPI_Comm) :: row, col
  real(real64), allocatable :: a(:), t(:)
  integer(int64), allocatable :: sums(:)
  integer(int64) :: h, allh(4), left, one
  character(len=16) :: arg
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  if (nprocs /= 4) then
    if (rank == 0) write (0, '(a)') 'comm_fft_f08: needs 4 ranks (a 2x2 grid)'
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end if
  steps = 4
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  call MPI_Comm_split(MPI_COMM_WORLD, rank / 2, mod(rank, 2), row)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank / 2, col)
  allocate (a(2 * b), t(2 * b), sums(2 * b))
  do i = 1, 2 * b
    a(i) = real(mod(rank * 7919 + (i - 1) * 31, 1000), real64) / 7.0_real64
  end do
  do s = 0, steps - 1
    call butterfly(a, t, s)
    call transpose(t, a, row)
    call butterfly(a, t, s + 1)
    call transpose(t, a, col)
  end do
  ! An exact reduction in place: integer sums of the data's bit patterns.
  do i = 1, 2 * b
    sums(i) = iand(transfer(a(i), 1_int64), 65535_int64)
  end do
  call MPI_Allreduce(MPI_IN_PLACE, sums, 2 * b, MPI_INTEGER8, MPI_SUM, row)
  h = 0
  do i = 1, 2 * b
    h = ieor(ishftc(h, 5), ieor(transfer(a(i), h), sums(i)))
  end do
  call MPI_Gather(h, 1, MPI_INTEGER8, allh, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD)
  call MPI_Sendrecv(h, 1, MPI_INTEGER8, mod(rank + 1, 4), 5, left, 1, MPI_INTEGER8, &
                    mod(rank + 3, 4), 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (rank == 1) call MPI_Send(left, 1, MPI_INTEGER8, 0, 6, MPI_COMM_WORLD)
  if (rank == 0) then
    call MPI_Recv(one, 1, MPI_INTEGER8, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    do r = 0, 3
      print '(a,i0,a,z16.16)', 'comm_fft_f08: rank ', r, ' hash ', allh(r + 1)
    end do
    print '(a,z16.16,a,z16.16)', 'comm_fft_f08: ring ', left, ' ', one
  end if
  call MPI_Comm_free(row)
  call MPI_Comm_free(col)
  call MPI_Finalize()
contains
  subroutine transpose(sb, rb, comm)
    real(real64), intent(in) :: sb(2 * b)
    real(real64), intent(inout) :: rb(2 * b)
    type(MPI_Comm), intent(in) :: comm
    call MPI_Alltoall(sb, b, MPI_DOUBLE_PRECISION, rb, b, MPI_DOUBLE_PRECISION, comm)
  end subroutine transpose

  ! Reads the blocks last first, as comm_fft.c does.
  subroutine butterfly(x, y, st)
    real(real64), intent(in) :: x(2 * b)
    real(real64), intent(out) :: y(2 * b)
    integer, intent(in) :: st
    integer :: blk, j
    do blk = 1, 0, -1
      do j = 1, b
        y((1 - blk) * b + j) = 0.5_real64 * x(blk * b + j) - 0.25_real64 * x(blk * b + (b + 1 - j)) &
                               + 0.125_real64 * real(st + blk, real64)
      end do
    end do
  end subroutine butterfly
end program comm_fft_f08
