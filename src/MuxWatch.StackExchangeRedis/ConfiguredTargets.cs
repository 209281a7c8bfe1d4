using Microsoft.Extensions.Options;

namespace MuxWatch.StackExchangeRedis;

/// <summary>One Redis endpoint (or set of endpoints) for the sidecar to watch, bound from <c>MuxWatch:Targets</c>.</summary>
public sealed class TargetOptions
{
    /// <summary>The name: the <c>multiplexer</c> label and the name in <c>/api/targets</c>.</summary>
    public string Name { get; set; } = string.Empty;

    /// <summary>A StackExchange.Redis configuration string, such as <c>redis:6379,password=...,ssl=true</c>. The password is never shown.</summary>
    public string ConnectionString { get; set; } = string.Empty;
}

/// <summary>The <c>MuxWatch:Targets</c> list.</summary>
public sealed class TargetsOptions
{
    /// <summary>The targets; when none are configured, <c>localhost:6379</c> is watched as <c>local</c>.</summary>
    public List<TargetOptions> Targets { get; set; } = [];
}

/// <summary>The multiplexers MuxWatch creates for <c>MuxWatch:Targets</c>.</summary>
internal sealed class ConfiguredTargets(IOptions<TargetsOptions> options)
{
    public const string SectionName = "MuxWatch:Targets";

    /// <summary>What is watched when nothing is configured, so that the README's run command works as it is.</summary>
    public static readonly TargetOptions Default = new() { Name = "local", ConnectionString = "localhost:6379" };

    public IEnumerable<MultiplexerRegistration> Registrations()
    {
        var targets = options.Value.Targets.Count == 0 ? [Default] : options.Value.Targets;
        return targets.Select(t => MultiplexerRegistration.ForConnectionString(t.Name.Trim(), t.ConnectionString));
    }
}

/// <summary>Rejects targets that cannot work, naming the setting (never the password).</summary>
internal sealed class TargetsOptionsValidator : IValidateOptions<TargetsOptions>
{
    public ValidateOptionsResult Validate(string? name, TargetsOptions options)
    {
        var failures = new List<string>();
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < options.Targets.Count; i++)
        {
            var target = options.Targets[i];
            var setting = $"{ConfiguredTargets.SectionName}:{i}";
            if (string.IsNullOrWhiteSpace(target.Name))
            {
                failures.Add($"{setting}:Name is required.");
            }
            else if (!Names.IsValid(target.Name.Trim()))
            {
                failures.Add($"{setting}:Name must be 1 to 64 letters, digits, '.', '_' or '-' (was '{target.Name}').");
            }
            else if (!seen.Add(target.Name.Trim()))
            {
                failures.Add($"{setting}:Name '{target.Name}' is used by another target: names must be unique.");
            }

            try
            {
                OwnedConnection.Parse(target.ConnectionString);
            }
            catch (ArgumentException ex)
            {
                failures.Add($"{setting}:ConnectionString is not a valid StackExchange.Redis configuration string: {ex.Message}.");
            }
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

/// <summary>Multiplexer names: they become label values, so they are short and plain.</summary>
internal static class Names
{
    public static bool IsValid(string name) =>
        name.Length is > 0 and <= 64 && name.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-');
}
