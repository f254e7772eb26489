package pgadmin_test

import (
	"fmt"

	"github.com/toolmark/toolmark/internal/harness/pgadmin"
)

func ExampleWithDatabase() {
	fmt.Println(pgadmin.WithDatabase("postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "toolmark_x"))
	fmt.Println(pgadmin.WithDatabase("host=127.0.0.1 user=postgres", "toolmark_x"))
	// Output:
	// postgres://postgres@127.0.0.1:5432/toolmark_x?sslmode=disable
	// host=127.0.0.1 user=postgres dbname=toolmark_x
}
