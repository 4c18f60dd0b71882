/* placeholder */
int ccsim_placeholder(void);
int ccsim_placeholder(void) { return 0; }
