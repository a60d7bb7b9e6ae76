import Foundation
/// Doc
public class Foo: Bar {
    var x: Int = 0
    init(x: Int) { self.x = x }
    func greet(name: String) -> String { return name }
}
struct Point { func len() -> Double { 0 } }
enum Dir { case up; func flip() {} }
extension Foo { func more() {} }
protocol Shape { func area() -> Double }
func topLevel() {}
typealias Name = String
