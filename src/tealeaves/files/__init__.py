"""Layer 1.1, the file layer: every text file read (textfile), records and strict values read
(records), outputs written whole (atomic), CSV written for spreadsheets (csvout)."""
