from plasmate_nb.cli import main

raise SystemExit(main())
