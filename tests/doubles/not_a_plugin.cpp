// A shared object that is not a dtnn plugin: the registry must reject it and carry on.
extern "C" int not_a_plugin_answer() { return 42; }
