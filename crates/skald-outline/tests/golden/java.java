package demo;

import java.util.List;

public class Service {
    private final int x;

    public Service(int x) { this.x = x; }

    public int compute(List<Integer> xs) {
        return x;
    }

    static class Nested {
        void helper() {}
    }
}

interface Repo<T> {
    T find(long id);
}

enum Level {
    LOW, HIGH;
    int weight() { return 1; }
}

record Pair(int a, int b) {}
