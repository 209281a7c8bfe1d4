using Microsoft.Extensions.Options;

namespace MuxWatch.StackExchangeRedis;

/// <summary>The multiplexers MuxWatch creates for <c>MuxWatch:Targets</c>.</summary>
internal sealed class ConfiguredTargets(IOptions<TargetsOptions> options)
{
    public const string SectionName = "MuxWatch:Targets";

    /// <summary>What is watched when nothing is configured, so that the README's run command works as it is.</summary>
    public static readonly TargetOptions Default = new() { Name = "local", ConnectionString = "localhost:6379" };

    public IEnumerable<MultiplexerRegistration> Registrations()
    {
        var targets = options.Value.Targets.Count == 0 ? [Default] : options.Value.Targets;
        return targets.Select((t, i) => MultiplexerRegistration.ForConnectionString(
            t.Name.Trim(), t.ConnectionString, t.ReadPassword(), t.ReadTrustedCa(), $"{SectionName}:{i}:TrustedCaFile"));
    }
}
