using System.ComponentModel;

namespace MuxWatch.Hosting;

/// <summary>
/// The contract between the core and a probe package (MuxWatch.StackExchangeRedis): what the package adds
/// to every <c>AddMuxWatch()</c> when the app has it, without the app touching one of its types.
/// </summary>
/// <remarks>
/// Apps never implement or call this. It exists because a package an app references is not loaded until
/// one of its types is used: with <c>AddMuxWatch()</c> alone the core looks the package up by name (as
/// ASP.NET Core's hosting startup assemblies are) and lets it add what it watches by default, such as the
/// multiplexers that libraries make.
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)]
public interface IMuxWatchProbePackage
{
    /// <summary>Adds the package's default services to <paramref name="builder"/>; called once per service collection.</summary>
    void AddTo(MuxWatchBuilder builder);
}
