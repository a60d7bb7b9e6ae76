#include <stdio.h>
#define MAX 10
#define SQUARE(x) ((x) * (x))

struct point {
    int x, y;
};

typedef struct {
    double re, im;
} complex_t;

enum color { RED, GREEN };

static int helper(int a);

int *make_array(size_t n) {
    return 0;
}

int main(int argc, char **argv) {
    return helper(argc);
}

static int helper(int a) { return a; }
