using Microsoft.Extensions.Options;

namespace MuxWatch.StackExchangeRedis;

/// <summary>One Redis endpoint (or set of endpoints) for the sidecar to watch, bound from <c>MuxWatch:Targets</c>.</summary>
public sealed class TargetOptions
{
    /// <summary>The name: the <c>multiplexer</c> label and the name in <c>/api/targets</c>.</summary>
    public string Name { get; set; } = string.Empty;

    /// <summary>A StackExchange.Redis configuration string, such as <c>redis:6379,password=...,ssl=true</c>. The password is never shown.</summary>
    public string ConnectionString { get; set; } = string.Empty;

    /// <summary>
    /// A file whose content (one trailing line break dropped) is the password, used instead of one in
    /// <see cref="ConnectionString"/>: the recommended form (a Kubernetes Secret or a Docker secret mounted
    /// as a file). A password on the command line is readable by any local user in <c>/proc/PID/cmdline</c>,
    /// and one with a comma cannot be written in a configuration string at all.
    /// </summary>
    public string? PasswordFile { get; set; }

    /// <summary>The password from <see cref="PasswordFile"/>, or null when none is set.</summary>
    internal string? ReadPassword() => string.IsNullOrWhiteSpace(PasswordFile) ? null : File.ReadAllText(PasswordFile).TrimEnd('\r', '\n');
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
        return targets.Select(t => MultiplexerRegistration.ForConnectionString(t.Name.Trim(), t.ConnectionString, t.ReadPassword()));
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
                if (PartAfterPasswordWithoutValue(target.ConnectionString))
                {
                    // Never shown: it is most likely the tail of a password with a comma in it.
                    failures.Add($"{setting}:ConnectionString has a part without '=' after password=, which would be read as an endpoint (a password with a comma in it?): list endpoints before password=, and put a password with a comma in {setting}:PasswordFile.");
                }
            }
            catch (ArgumentException ex)
            {
                failures.Add($"{setting}:ConnectionString is not a valid StackExchange.Redis configuration string: {ex.Message}.");
            }

            if (!string.IsNullOrWhiteSpace(target.PasswordFile))
            {
                try
                {
                    _ = target.ReadPassword();
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
                {
                    failures.Add($"{setting}:PasswordFile cannot be read ({ex.GetType().Name}): {target.PasswordFile}.");
                }
            }
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    /// <summary>True when a part with no <c>=</c> (which the client reads as an endpoint) follows <c>password=</c>.</summary>
    internal static bool PartAfterPasswordWithoutValue(string connectionString)
    {
        var afterPassword = false;
        foreach (var part in connectionString.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            if (part.StartsWith("password=", StringComparison.OrdinalIgnoreCase))
            {
                afterPassword = true;
            }
            else if (afterPassword && !part.Contains('=', StringComparison.Ordinal))
            {
                return true;
            }
        }

        return false;
    }
}

/// <summary>Multiplexer names: they become label values, so they are short and plain.</summary>
internal static class Names
{
    public static bool IsValid(string name) =>
        name.Length is > 0 and <= 64 && name.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-');
}
