package main
type T struct{ a int }
type I interface{ M() }
type N = int
func (t *T) M() {}
func main() {}
