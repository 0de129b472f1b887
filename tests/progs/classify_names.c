/*
 * classify_names.c: checks report/run/classify.c against a list of real kernel names
 * (tests/data/kernel_names.tsv: precision, operation, name). Prints each mismatch; exit 1 if any.
 */
#include "report/run/classify.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
    if (!f) {
        fprintf(stderr, "usage: classify_names FILE.tsv\n");
        return 2;
    }
    char line[8192];
    int checked = 0, wrong = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = 0;
        char *prec = strtok(line, "\t"), *op = strtok(NULL, "\t"), *name = strtok(NULL, "");
        if (!prec || !op || !name) continue;
        enum precision p;
        enum opclass o;
        classify_kernel(name, &p, &o);
        checked++;
        if (strcmp(precision_name(p), prec) || strcmp(opclass_name(o), op)) {
            wrong++;
            printf("expected %s/%s, got %s/%s: %s\n", prec, op, precision_name(p), opclass_name(o),
                   name);
        }
    }
    fclose(f);
    printf("%d names, %d misclassified\n", checked, wrong);
    return wrong ? 1 : checked ? 0 : 2;
}
