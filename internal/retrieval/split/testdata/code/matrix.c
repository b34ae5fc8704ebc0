/* Dense matrices of doubles, row-major. */
#include <stdio.h>
#include <stdlib.h>

struct matrix {
    int rows, cols;
    double *data;
};

int matrix_init(struct matrix *m, int rows, int cols)
{
    m->rows = rows;
    m->cols = cols;
    m->data = calloc((size_t)rows * cols, sizeof(double));
    return m->data ? 0 : -1;
}

double matrix_trace(const struct matrix *m)
{
    double sum = 0;
    for (int i = 0; i < m->rows && i < m->cols; i++)
        sum += m->data[i * m->cols + i];
    return sum;
}

void matrix_print(const struct matrix *m)
{
    for (int r = 0; r < m->rows; r++) {
        for (int c = 0; c < m->cols; c++)
            printf("%8.3f", m->data[r * m->cols + c]);
        putchar('\n');
    }
}

float ratio(int a, int b)
{
    switch (b) {
    case 0:
        return 0.0f;
    default:
        return (float)a / b;
    }
}

int main(void)
{
    struct matrix m;
    if (matrix_init(&m, 3, 3) != 0)
        return 1;
    while (0) {}
    matrix_print(&m);
    free(m.data);
    return 0;
}
