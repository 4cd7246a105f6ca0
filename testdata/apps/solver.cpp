// solver: a C++ MPI program whose MPI calls are made by member functions
// of a class in a namespace, for the call-site names of mpiflow (demangled
// function and source line). Each rank holds a part of a periodic 1-D rod;
// each of ITERS steps (default 50, first argument) swaps the edge cells
// with both neighbors and sums the change over all ranks.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace heat {

// Solver is one rank's part of the rod.
class Solver {
public:
	Solver(MPI_Comm comm, int cells);
	void exchange();
	double step();
	template <typename T> T sum(T local, MPI_Datatype type) const;
	int rank() const { return rank_; }
	int size() const { return size_; }

private:
	MPI_Comm comm_;
	int rank_ = 0, size_ = 1;
	std::vector<double> u_, next_;
};

Solver::Solver(MPI_Comm comm, int cells) : comm_(comm), u_(cells + 2), next_(cells + 2) {
	MPI_Comm_rank(comm_, &rank_);
	MPI_Comm_size(comm_, &size_);
	for (int i = 1; i <= cells; i++)
		u_[i] = std::sin(rank_ * cells + i);
}

// exchange swaps the edge cells with the left and right neighbors.
void Solver::exchange() {
	int left = (rank_ + size_ - 1) % size_, right = (rank_ + 1) % size_;
	int n = (int)u_.size() - 2;
	MPI_Request req[4];
	MPI_Irecv(&u_[0], 1, MPI_DOUBLE, left, 0, comm_, &req[0]);
	MPI_Irecv(&u_[n + 1], 1, MPI_DOUBLE, right, 1, comm_, &req[1]);
	MPI_Isend(&u_[n], 1, MPI_DOUBLE, right, 0, comm_, &req[2]);
	MPI_Isend(&u_[1], 1, MPI_DOUBLE, left, 1, comm_, &req[3]);
	MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
}

// sum is the sum of local over all ranks.
template <typename T> T Solver::sum(T local, MPI_Datatype type) const {
	T global = 0;
	MPI_Allreduce(&local, &global, 1, type, MPI_SUM, comm_);
	return global;
}

// step advances the rod by one explicit diffusion step and returns the
// total change.
double Solver::step() {
	exchange();
	double change = 0;
	for (size_t i = 1; i + 1 < u_.size(); i++) {
		next_[i] = u_[i] + 0.25 * (u_[i - 1] - 2 * u_[i] + u_[i + 1]);
		change += std::fabs(next_[i] - u_[i]);
	}
	u_.swap(next_);
	return sum(change, MPI_DOUBLE);
}

} // namespace heat

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int iters = argc > 1 ? std::atoi(argv[1]) : 50;
	heat::Solver s(MPI_COMM_WORLD, 64);
	double change = 0;
	for (int it = 0; it < iters; it++)
		change = s.step();
	long steps = s.sum(long(iters), MPI_LONG);
	if (s.rank() == 0)
		std::printf("solver: %d ranks, %d steps, last change %.3g\n", s.size(), iters, change);
	MPI_Finalize();
	return steps == long(iters) * s.size() ? 0 : 1;
}
