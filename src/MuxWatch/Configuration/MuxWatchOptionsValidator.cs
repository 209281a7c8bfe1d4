using Microsoft.Extensions.Options;

namespace MuxWatch.Configuration;

/// <summary>
/// Rejects settings out of their bounds (the <see cref="System.ComponentModel.DataAnnotations.RangeAttribute"/>s on
/// <see cref="MuxWatchOptions"/>, checked by the validator generated from them at build time), naming each setting as it
/// is configured, so that start-up fails instead of the host misbehaving later.
/// </summary>
/// <remarks>
/// The generated validator's copy of <c>RangeAttribute</c> ignores <c>ErrorMessage</c> (dotnet/runtime#123137, open), so
/// its failures say "The field MuxWatch.ProbeInterval"; this says "MuxWatch:ProbeInterval", the key a user writes.
/// </remarks>
internal sealed class MuxWatchOptionsValidator : IValidateOptions<MuxWatchOptions>
{
    private static readonly MuxWatchOptionsBounds Bounds = new();

    public ValidateOptionsResult Validate(string? name, MuxWatchOptions options)
    {
        var result = Bounds.Validate(MuxWatchOptions.SectionName, options);
        List<string> failures = result.Failed ? [.. result.Failures.Select(AsConfigured)] : [];
        if (FleetUrlProblem(options.FleetPrometheusUrl) is { } problem)
        {
            failures.Add($"{MuxWatchOptions.SectionName}:{nameof(MuxWatchOptions.FleetPrometheusUrl)} {problem}");
        }

        return failures.Count > 0 ? ValidateOptionsResult.Fail(failures) : ValidateOptionsResult.Success;
    }

    /// <summary>Why the fleet's Prometheus address cannot be used; null when it can (or is unset). Never repeats the address: it may hold a secret.</summary>
    private static string? FleetUrlProblem(Uri? url) => url switch
    {
        null => null,
        { IsAbsoluteUri: false } => "must be an absolute address, as http://prometheus:9090",
        { Scheme: not ("http" or "https") } => "must be an http or https address",
        { UserInfo.Length: > 0 } => "must not hold a user name or password (they would travel in every log line that names the address)",
        { Query.Length: > 0 } or { Fragment.Length: > 0 } => "must be Prometheus' base address, without a query or fragment",
        _ => null,
    };

    /// <summary>"ProbeInterval: The field MuxWatch.ProbeInterval must be ..." as "MuxWatch:ProbeInterval must be ...".</summary>
    private static string AsConfigured(string failure)
    {
        var field = $"The field {MuxWatchOptions.SectionName}.";
        var at = failure.IndexOf(field, StringComparison.Ordinal);
        return at < 0 ? failure : $"{MuxWatchOptions.SectionName}:{failure[(at + field.Length)..]}";
    }
}

/// <summary>The bounds' validator, generated from the attributes (no reflection: trimming- and AOT-safe).</summary>
[OptionsValidator]
internal sealed partial class MuxWatchOptionsBounds : IValidateOptions<MuxWatchOptions>;
