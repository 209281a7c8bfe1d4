// Every layer of the core, for every test file: tests read across layers by design.
global using MuxWatch.Configuration;
global using MuxWatch.Diagnosis;
global using MuxWatch.Export;
global using MuxWatch.Fleet;
global using MuxWatch.Json;
global using MuxWatch.Model;
global using MuxWatch.Pipeline;
global using MuxWatch.Reading;
global using MuxWatch.Sinks;
global using MuxWatch.Sources;
global using MuxWatch.State;
global using MuxWatch.Tracking;
