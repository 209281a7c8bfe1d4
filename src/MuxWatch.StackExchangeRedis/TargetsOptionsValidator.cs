using Microsoft.Extensions.Options;

namespace MuxWatch.StackExchangeRedis;

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

            ValidateTrustedCa(target, setting, failures);
            if (!string.IsNullOrWhiteSpace(target.PasswordFile))
            {
                try
                {
                    _ = target.ReadPassword();
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
                {
                    // The reason, never the content: an IOException's message here is the file system's or the size check's.
                    failures.Add($"{setting}:PasswordFile cannot be used ({ex.GetType().Name}: {ex.Message}): {target.PasswordFile}.");
                }
            }
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    private static void ValidateTrustedCa(TargetOptions target, string setting, List<string> failures)
    {
        if (string.IsNullOrWhiteSpace(target.TrustedCaFile))
        {
            return;
        }

        try
        {
            foreach (var certificate in target.ReadTrustedCa() ?? [])
            {
                certificate.Dispose();
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException or System.Security.Cryptography.CryptographicException)
        {
            failures.Add($"{setting}:TrustedCaFile is not a readable certificate (PEM or DER) ({ex.GetType().Name}): {target.TrustedCaFile}.");
        }
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
