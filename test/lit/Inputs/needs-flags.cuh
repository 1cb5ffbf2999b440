#define VALUE 42
