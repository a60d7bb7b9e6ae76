package demo

import kotlin.math.sqrt

class Foo(val x: Int) {
    fun greet(): String {
        return "hi"
    }

    companion object {
        fun make(): Foo = Foo(1)
    }
}

interface Shape {
    fun area(): Double
}

object Registry {
    fun get(key: String): String? = null
}

data class Point(val a: Int, val b: Int)

enum class Dir {
    UP,
    DOWN;

    fun flip(): Dir = if (this == UP) DOWN else UP
}

fun top(a: Int): Int {
    return a
}

typealias Name = String
