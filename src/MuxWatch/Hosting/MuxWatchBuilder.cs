using Microsoft.Extensions.DependencyInjection;

namespace MuxWatch.Hosting;

/// <summary>Returned by <c>AddMuxWatch()</c> so that further MuxWatch calls chain.</summary>
/// <param name="Services">The service collection MuxWatch was added to.</param>
public sealed record MuxWatchBuilder(IServiceCollection Services);
