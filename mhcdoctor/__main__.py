from mhcdoctor.cli import main

main()
