#include <vector>
namespace geo {
class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
    int id() const { return id_; }
private:
    int id_;
};
struct Square : Shape {
    double side;
    double area() const override { return side * side; }
};
template <typename T>
T clamp(T v, T lo, T hi) { return v < lo ? lo : v; }
}
double geo::free_area(const geo::Shape& s) { return s.area(); }
int main() { return 0; }
