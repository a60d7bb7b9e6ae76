#ifndef HEADER_H
#define HEADER_H
#ifdef __cplusplus
extern "C" {
#endif
typedef struct node node_t;
struct node { int value; struct node *next; };
int list_len(const node_t *head);
void (*callback)(int);
#ifdef __cplusplus
}
#endif
#endif
